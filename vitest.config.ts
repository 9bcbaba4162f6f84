import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Every test file's tempDir() folders are removed once it has run.
    setupFiles: ["test/support/tempDirs.setup.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: integration files share one embedded PostgreSQL; keep parallelism modest.
    maxWorkers: 2,
    minWorkers: 1
  }
})
