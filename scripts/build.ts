/**
 * `npm run build` (and the first step of `npm start`): the server and the
 * domain compiled to JavaScript under `dist/`, so the production process
 * loads plain modules instead of stripping the types of every source file at
 * start-up — measured, the server then starts at ~142 MB RSS instead of
 * ~179 MB on PostgreSQL (type stripping's compiler and the sources it keeps).
 *
 * `dist/` mirrors `packages/`: `dist/server/src/main.js` is the server. Each
 * built package gets a `package.json` whose exports name its `.js` files, and
 * `dist/node_modules/@switchboard/*` links to them, so `@switchboard/domain`
 * imported from the built server resolves to the built domain; everything
 * else (effect, undici, …) resolves from the project's `node_modules`.
 * Files are overwritten in place (never a `dist/` removed under a running
 * server's lazy imports).
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..")
const PACKAGES = ["domain", "providers", "server"] as const

/** Compiles into `dist/`; throws with the compiler's output when it fails. */
export const build = () => {
  const tsc = join(ROOT, "node_modules", ".bin", "tsc")
  execFileSync(tsc, ["-p", join(ROOT, "tsconfig.build.json")], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] })
  for (const name of PACKAGES) {
    const source = JSON.parse(readFileSync(join(ROOT, "packages", name, "package.json"), "utf8")) as {
      name: string
      exports: Record<string, string>
    }
    const exports = Object.fromEntries(Object.entries(source.exports).map(([key, target]) => [key, target.replace(/\.ts$/, ".js")]))
    writeFileSync(join(ROOT, "dist", name, "package.json"), JSON.stringify({ name: source.name, type: "module", exports }, null, 2) + "\n")
    const link = join(ROOT, "dist", "node_modules", "@switchboard", name)
    mkdirSync(dirname(link), { recursive: true })
    rmSync(link, { force: true })
    symlinkSync(join("..", "..", name), link, "dir")
  }
}

/** The built server's entry point. */
export const BUILT_SERVER_MAIN = join(ROOT, "dist", "server", "src", "main.js")

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now()
  try {
    build()
  } catch (error) {
    const output = error as { stdout?: Buffer; stderr?: Buffer; message: string }
    process.stderr.write(`build failed: ${output.stdout?.toString() ?? ""}${output.stderr?.toString() ?? output.message}\n`)
    process.exit(1)
  }
  if (!process.argv.includes("--quiet")) {
    console.log(`built dist/ (server and domain) in ${Math.round(performance.now() - started)} ms`)
  }
}
