import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    exclude: ["**/node_modules/**"],
    // The server runs with Effect's Schema JIT compiler (packages/server/src/main.ts): so do the tests.
    setupFiles: ["effect/schema/SchemaJITCompiler/enable"],
    // The start-up and killed-replica tests run the production build as processes: built once, first.
    globalSetup: ["./scripts/vitest-build.ts"],
    // Each file that needs a database starts its own (PGlite, or a scratch database on DATABASE_URL):
    // two cores, so keep the number of files in flight small.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
