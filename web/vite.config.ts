import { defineConfig } from "vite"

// Preact through esbuild's automatic JSX runtime: no framework plugin needed.
export default defineConfig({
  root: import.meta.dirname,
  // Relative asset URLs: the service injects <base href="BASE_PATH/console/"> into index.html.
  base: "./",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // The polyfill would be an inline script, which the Content-Security-Policy forbids.
    modulePreload: { polyfill: false },
    target: "es2022",
    reportCompressedSize: true
  }
})
