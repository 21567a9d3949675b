/**
 * The import picture of the workspace: domain ← providers ← server; domain ← client ← host-agent,
 * cli and web; host-agent ← cli; providers ← host-agent (its direct transport). The CLI reaches
 * the server only by the lazy import `switchboard serve` needs. Tests may use another package's
 * exports (its test helpers included), never a relative path into it.
 *
 * Each library's face is `.` and, where it ships fakes for other packages' tests, one `./testing`
 * module; the console (web) is an app that nothing imports. The client and the domain it needs
 * are packed as libraries (scripts/build.ts `packLibraries`, packages/client/test/Pack.test.ts):
 * their packed form exports built JavaScript and declarations.
 */
import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const PACKAGES = fileURLToPath(new URL("../..", import.meta.url)) // packages/, with its trailing slash

const allowed: Record<string, ReadonlyArray<string>> = {
  domain: [],
  providers: ["domain"],
  server: ["domain", "providers"],
  client: ["domain"],
  "host-agent": ["domain", "client", "providers"],
  cli: ["domain", "client", "host-agent"],
  web: ["domain", "client"]
}

const filesUnder = (dir: string): Array<string> => {
  try {
    return readdirSync(dir).flatMap((name) => {
      const path = join(dir, name)
      if (name === "node_modules") return []
      return statSync(path).isDirectory() ? filesUnder(path) : /\.tsx?$/.test(name) ? [path] : []
    })
  } catch {
    return []
  }
}

interface Manifest {
  readonly exports: Record<string, unknown>
  readonly dependencies?: Record<string, string>
  readonly publishConfig?: unknown
}

const manifestOf = (name: string): Manifest => JSON.parse(readFileSync(join(PACKAGES, name, "package.json"), "utf8")) as Manifest

/** Every module specifier of a file, static or dynamic, with whether it is a dynamic `import()`. */
const importsOf = (text: string) =>
  [...text.matchAll(/(?:^|[^\w.])(import\s*\(\s*|from\s+|import\s+)"([^"]+)"/gm)].map((m) => ({
    specifier: m[2]!,
    dynamic: m[1]!.startsWith("import") && m[1]!.includes("(")
  }))

describe("package arrows", () => {
  it("sources import only the packages their role allows; the CLI the server only lazily", () => {
    const found: Array<string> = []
    for (const [name, deps] of Object.entries(allowed)) {
      for (const file of filesUnder(join(PACKAGES, name, "src"))) {
        for (const { dynamic, specifier } of importsOf(readFileSync(file, "utf8"))) {
          const target = /^@switchboard\/([^/]+)/.exec(specifier)?.[1]
          if (target === undefined || target === name || deps.includes(target)) continue
          if (name === "cli" && target === "server" && dynamic) continue
          found.push(`${relative(PACKAGES, file)} → ${specifier}`)
        }
      }
    }
    assert.deepStrictEqual(found, [])
  })

  it("every package is reached through its face: `@switchboard/<name>` (and its `/testing` helpers), never a module of theirs", () => {
    const libraries = ["domain", "providers", "client", "server", "host-agent", "cli", "web"]
    for (const name of libraries) {
      const exports = manifestOf(name).exports as Record<string, unknown> | undefined
      if (name === "web") {
        assert.isUndefined(exports, "the console is an app: it exports nothing")
        continue
      }
      assert.deepStrictEqual(Object.keys(exports ?? {}).filter((key) => key !== "./testing"), ["."], `${name}'s exports`)
      // One module each: no wildcard, no conditions (the workspace runs the sources).
      for (const target of Object.values(exports ?? {})) assert.match(String(target), /^\.\/[\w/.-]+\.ts$/, `${name}'s exports`)
    }
    const found: Array<string> = []
    for (const name of Object.keys(allowed)) {
      const root = join(PACKAGES, name)
      for (const file of [...filesUnder(join(root, "src")), ...filesUnder(join(root, "test"))]) {
        for (const { specifier } of importsOf(readFileSync(file, "utf8"))) {
          const deep = /^@switchboard\/([^/]+)\/(.+)$/.exec(specifier)
          if (deep === null || !libraries.includes(deep[1]!) || deep[2] === "testing") continue
          found.push(`${relative(PACKAGES, file)} → ${specifier}`)
        }
      }
    }
    assert.deepStrictEqual(found, [])
  })

  it("the client and the domain pack as libraries: their packed exports are the built JavaScript and its declarations", () => {
    for (const name of ["domain", "client"]) {
      const manifest = manifestOf(name)
      assert.strictEqual(manifest.exports["."], "./src/index.ts")
      assert.deepStrictEqual(manifest.publishConfig, {
        exports: { ".": { types: "./src/index.d.ts", import: "./src/index.js" } },
        files: ["src/**/*.js", "src/**/*.d.ts"]
      }, `${name}'s packed form`)
    }
    // What the packed client depends on of the workspace is packed as well.
    const workspace = Object.keys(manifestOf("client").dependencies ?? {}).filter((dep) => dep.startsWith("@switchboard/"))
    assert.deepStrictEqual(workspace, ["@switchboard/domain"])
  })

  it("no file reaches into another package by a relative path", () => {
    const found: Array<string> = []
    let files = 0
    for (const name of Object.keys(allowed)) {
      const root = join(PACKAGES, name)
      for (const file of [...filesUnder(join(root, "src")), ...filesUnder(join(root, "test"))]) {
        files++
        for (const { specifier } of importsOf(readFileSync(file, "utf8"))) {
          if (!specifier.startsWith(".")) continue
          const target = resolve(dirname(file), specifier)
          if (target.startsWith(PACKAGES) && !target.startsWith(root + "/")) found.push(`${relative(PACKAGES, file)} → ${specifier}`)
        }
      }
    }
    assert.isAbove(files, 100)
    assert.deepStrictEqual(found, [])
  })

  it("no circle of files in any package, and no two folders of the server that import each other, even around a circle", () => {
    const found: Array<string> = []
    for (const name of Object.keys(allowed)) {
      const src = join(PACKAGES, name, "src")
      const graph = new Map<string, Array<string>>()
      for (const file of filesUnder(src)) {
        const targets = importsOf(readFileSync(file, "utf8"))
          .filter(({ specifier }) => specifier.startsWith("."))
          .map(({ specifier }) => resolve(dirname(file), specifier))
        graph.set(file, targets)
      }
      for (const circle of circles(graph)) found.push(`${name}: files ${circle.map((f) => relative(src, f)).join(" → ")}`)
      if (name !== "server") continue
      // The folder of a file: its first folder under src (a file at src's top is its own).
      const folderOf = (file: string) => relative(src, file).split("/").slice(0, -1)[0] ?? relative(src, file)
      const folders = new Map<string, Array<string>>()
      for (const [file, targets] of graph) {
        const from = folderOf(file)
        const to = [...new Set(targets.filter((t) => graph.has(t)).map(folderOf))].filter((f) => f !== from)
        folders.set(from, [...(folders.get(from) ?? []), ...to])
      }
      for (const circle of circles(folders)) found.push(`${name}: folders ${circle.join(" → ")}`)
    }
    assert.deepStrictEqual(found, [])
  })
})

/** The strongly connected parts of more than one node (Tarjan): each holds a circle. */
const circles = (graph: ReadonlyMap<string, ReadonlyArray<string>>): Array<Array<string>> => {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<Array<string>> = []
  const visit = (node: string) => {
    index.set(node, next)
    low.set(node, next++)
    stack.push(node)
    onStack.add(node)
    for (const to of graph.get(node) ?? []) {
      if (!graph.has(to)) continue
      if (!index.has(to)) {
        visit(to)
        low.set(node, Math.min(low.get(node)!, low.get(to)!))
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!))
    }
    if (low.get(node) !== index.get(node)) return
    const part: Array<string> = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      part.push(member)
    } while (member !== node)
    if (part.length > 1) found.push(part.sort())
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found
}
