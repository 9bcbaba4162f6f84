import { defineConfig } from "vitest/config"

// Unit tests only: no database, no globalSetup.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/integration/**", "node_modules/**"],
    testTimeout: 30_000
  }
})
