import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    exclude: ["**/node_modules/**"],
    // Each file that needs a database starts its own (PGlite, or a scratch database on DATABASE_URL):
    // two cores, so keep the number of files in flight small.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
