import { defineConfig } from "vitest/config"

// Unit tests only: no database, no browser, no globalSetup. test/memory belongs here: the whole app over
// its in-memory stores (test/support/app.ts, its default stores).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Every test file's tempDir() folders are removed once it has run.
    setupFiles: ["test/support/tempDirs.setup.ts"],
    exclude: ["test/integration/**", "test/console/**", "node_modules/**"],
    testTimeout: 30_000
  }
})
