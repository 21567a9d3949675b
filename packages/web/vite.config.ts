/**
 * The console's build: `packages/web` into `dist/web` (run by scripts/build.ts). Vite 8
 * transforms the TSX itself (oxc, React's automatic runtime); no plugin needed.
 *
 * `npx vite packages/web` serves it in development with the API proxied to a server on 8787.
 */
import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

const API = process.env.SWITCHBOARD_SERVER ?? "http://127.0.0.1:8787"

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  oxc: { jsx: { runtime: "automatic" } },
  build: {
    outDir: fileURLToPath(new URL("../../dist/web", import.meta.url)),
    emptyOutDir: true,
    target: "es2023",
    // Every browser the console supports has modulepreload: no polyfill in the entry chunk.
    modulePreload: { polyfill: false },
    reportCompressedSize: false
  },
  server: {
    proxy: Object.fromEntries(["/api", "/admin", "/docs", "/openapi.json", "/healthz", "/readyz"].map((path) => [path, API]))
  }
})
