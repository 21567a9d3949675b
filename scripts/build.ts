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
 *
 * `node scripts/build.ts --pack` (`npm run pack:client`) builds the client as
 * a library for use outside the workspace, with the domain it depends on:
 * JavaScript and declarations in `dist/pack/<name>`, each with the package.json
 * of its packed form (the source's, its `publishConfig` applied: `exports` with
 * `types`/`import` conditions, `files`), and packs each with `npm pack` into
 * `dist/pack/switchboard-<name>-<version>.tgz`.
 *
 * The web console (`packages/web`) is built by Vite into `dist/web`, which the
 * server serves at `/` (docs/console.md) — only when its inputs changed since
 * the last build (its sources, the client and domain sources it bundles, the
 * lockfile: their hash is kept in `dist/web-build.json`), so `npm start` stays
 * fast. The build prints the first load's JavaScript, gzipped: the entry chunk
 * and what `index.html` preloads (the target is at most 250 KB).
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..")
const PACKAGES = ["domain", "providers", "server"] as const
const TSC = join(ROOT, "node_modules", ".bin", "tsc")

/** Compiles into `dist/`; throws with the compiler's output when it fails. */
export const build = () => {
  execFileSync(TSC, ["-p", join(ROOT, "tsconfig.build.json")], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] })
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

/** The libraries packed for use outside the workspace: the client, and the domain it depends on. */
const LIBRARIES = ["domain", "client"] as const

interface LibraryManifest {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly type: string
  readonly dependencies?: Record<string, string>
  /** The workspace's exports: the TypeScript sources. */
  readonly exports: Record<string, string>
  /** The packed form's `exports` (conditions `types` and `import`) and `files`. */
  readonly publishConfig: { readonly exports: Record<string, unknown>; readonly files: ReadonlyArray<string> }
}

/**
 * Builds the libraries into `outDir/<name>` (JavaScript and declarations, packages/client/tsconfig.build.json),
 * each with its packed form's package.json: the source's, its `publishConfig` in place of the workspace's
 * exports. Returns their directories.
 */
export const buildLibraries = (outDir: string = join(ROOT, "dist", "pack")): Array<string> => {
  const config = join(ROOT, "packages", "client", "tsconfig.build.json")
  // From scratch (nothing runs from here): a module since removed must not be packed.
  for (const name of LIBRARIES) rmSync(join(outDir, name), { recursive: true, force: true })
  execFileSync(TSC, ["-p", config, "--outDir", outDir], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] })
  return LIBRARIES.map((name) => {
    const source = JSON.parse(readFileSync(join(ROOT, "packages", name, "package.json"), "utf8")) as LibraryManifest
    const { dependencies, exports: _workspace, publishConfig, ...identity } = source
    const packed = { ...identity, ...publishConfig, dependencies }
    writeFileSync(join(outDir, name, "package.json"), JSON.stringify(packed, null, 2) + "\n")
    return join(outDir, name)
  })
}

/** Builds the libraries into `outDir` and packs each there (`npm pack`): the tarballs' paths, the domain's first. */
export const packLibraries = (outDir: string = join(ROOT, "dist", "pack")): Array<string> =>
  buildLibraries(outDir).map((dir) => {
    const packed = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", outDir, dir], {
      cwd: outDir,
      stdio: ["ignore", "pipe", "pipe"]
    })
    return join(outDir, (JSON.parse(packed.toString()) as Array<{ filename: string }>)[0]!.filename)
  })

/** Where the console is built, and the hash of the inputs it was built from. */
export const WEB_DIST = join(ROOT, "dist", "web")
const WEB_STAMP = join(ROOT, "dist", "web-build.json")

/** What the console's bundle is made of: a change to any of them rebuilds it. */
const WEB_INPUTS = [
  "package-lock.json",
  "packages/web/index.html",
  "packages/web/package.json",
  "packages/web/vite.config.ts",
  "packages/web/public",
  "packages/web/src",
  "packages/client/src",
  "packages/domain/src"
]

const filesOf = (path: string): Array<string> =>
  !existsSync(path) ? [] : statSync(path).isDirectory()
  ? readdirSync(path).sort().flatMap((name) => filesOf(join(path, name)))
  : [path]

const webInputsHash = () => {
  const hash = createHash("sha256")
  for (const file of WEB_INPUTS.flatMap((input) => filesOf(join(ROOT, input)))) {
    hash.update(relative(ROOT, file)).update("\0").update(readFileSync(file)).update("\0")
  }
  return hash.digest("hex")
}

export interface FirstLoad {
  /** The entry chunk and the modules index.html preloads, gzipped. */
  readonly gzipBytes: number
  readonly files: number
}

/** The JavaScript the console's first load fetches (what `dist/web/index.html` loads and preloads), gzipped. */
export const firstLoadOf = (dir: string = WEB_DIST): FirstLoad => {
  const html = readFileSync(join(dir, "index.html"), "utf8")
  const scripts = [...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g), ...html.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g)]
    .map((match) => match[1]!)
  const gzipBytes = scripts.reduce((sum, src) => sum + gzipSync(readFileSync(join(dir, src))).length, 0)
  return { gzipBytes, files: scripts.length }
}

/** Builds the console into `dist/web` with Vite, unless its inputs are those of the last build: whether it built. */
export const buildWeb = (): boolean => {
  const hash = webInputsHash()
  const last = existsSync(WEB_STAMP) ? (JSON.parse(readFileSync(WEB_STAMP, "utf8")) as { hash?: string }).hash : undefined
  if (last === hash && existsSync(join(WEB_DIST, "index.html"))) return false
  const vite = join(ROOT, "node_modules", "vite", "bin", "vite.js")
  execFileSync(process.execPath, [vite, "build", "--config", join(ROOT, "packages", "web", "vite.config.ts"), "--mode", "production", "--logLevel", "warn"], {
    cwd: ROOT,
    // Always the production bundle: run from the tests (NODE_ENV=test) Vite would build React's development one,
    // which `npm start` would then serve as unchanged.
    env: { ...process.env, NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  writeFileSync(WEB_STAMP, JSON.stringify({ hash }, null, 2) + "\n")
  return true
}

/** The built server's entry point. */
export const BUILT_SERVER_MAIN = join(ROOT, "dist", "server", "src", "main.js")

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes("--pack")) {
  for (const tarball of packLibraries()) console.log(`packed ${relative(ROOT, tarball)}`)
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now()
  let web: { readonly built: boolean; readonly ms: number }
  try {
    build()
    const server = performance.now()
    if (!process.argv.includes("--quiet")) console.log(`built dist/ (server and domain) in ${Math.round(server - started)} ms`)
    web = { built: buildWeb(), ms: Math.round(performance.now() - server) }
  } catch (error) {
    const output = error as { stdout?: Buffer; stderr?: Buffer; message: string }
    process.stderr.write(`build failed: ${output.stdout?.toString() ?? ""}${output.stderr?.toString() ?? output.message}\n`)
    process.exit(1)
  }
  if (!process.argv.includes("--quiet")) {
    const { files, gzipBytes } = firstLoadOf()
    const size = `first load: ${(gzipBytes / 1024).toFixed(1)} KB of JavaScript gzipped (${files} file${files === 1 ? "" : "s"}; target 250 KB)`
    console.log(web.built ? `built dist/web (the console) in ${web.ms} ms; ${size}` : `dist/web (the console) unchanged; ${size}`)
  }
}
