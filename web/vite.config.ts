import { defineConfig } from "vite"

// Preact through esbuild's automatic JSX runtime: no framework plugin needed.
export default defineConfig({
  root: import.meta.dirname,
  // Relative asset URLs: the service injects <base href="BASE_PATH/console/"> into index.html.
  base: "./",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    // Beside the server build: scripts/build.mjs runs this as its "web" step.
    outDir: "../dist/web",
    emptyOutDir: true,
    // The polyfill would be an inline script, which the Content-Security-Policy forbids.
    modulePreload: { polyfill: false },
    target: "es2022",
    reportCompressedSize: true
  }
})
