/**
 * The import picture of the workspace: domain ← providers ← server; domain ← client ← cli and web;
 * providers ← cli (the host agent's direct transport). The CLI reaches the server only by the lazy
 * import `switchboard serve` needs. Tests may use another package's exports (its test helpers
 * included), never a relative path into it.
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
  cli: ["domain", "client", "providers"],
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

  it("the libraries are reached through their face: `@switchboard/<name>` (and its `testing/*` helpers), never a module of theirs", () => {
    const libraries = ["domain", "providers", "client"]
    for (const name of libraries) {
      const exports = JSON.parse(readFileSync(join(PACKAGES, name, "package.json"), "utf8")).exports as Record<string, string>
      assert.deepStrictEqual(Object.keys(exports).filter((key) => key !== "." && key !== "./testing/*"), [], `${name}'s exports`)
    }
    const found: Array<string> = []
    for (const name of Object.keys(allowed)) {
      const root = join(PACKAGES, name)
      for (const file of [...filesUnder(join(root, "src")), ...filesUnder(join(root, "test"))]) {
        for (const { specifier } of importsOf(readFileSync(file, "utf8"))) {
          const deep = /^@switchboard\/([^/]+)\/(.+)$/.exec(specifier)
          if (deep === null || !libraries.includes(deep[1]!) || deep[2]!.startsWith("testing/")) continue
          found.push(`${relative(PACKAGES, file)} → ${specifier}`)
        }
      }
    }
    assert.deepStrictEqual(found, [])
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
})
