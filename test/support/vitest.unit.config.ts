import { defineConfig } from "vitest/config"

// Unit tests only: no database, no browser, no globalSetup.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/integration/**", "test/console/**", "node_modules/**"],
    testTimeout: 30_000
  }
})
