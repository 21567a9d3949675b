/**
 * The client package runs in a browser: bundled for the browser platform (Vite, as the web console
 * is built), nothing it imports — its own modules, the domain, Effect, Zustand — may reach for a
 * Node built-in, and its own sources use no Node global.
 */
import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { builtinModules } from "node:module"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "vite"
import type { Plugin } from "vite"

const SOURCES = fileURLToPath(new URL("../src", import.meta.url))
const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]))

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : name.endsWith(".ts") ? [path] : []
  })

describe("the client in a browser", () => {
  it("bundles for the browser without a Node built-in", { timeout: 120_000 }, async () => {
    const reached: Array<string> = []
    const noNodeBuiltins: Plugin = {
      name: "no-node-builtins",
      enforce: "pre",
      resolveId(id, importer) {
        if (builtins.has(id) || id.startsWith("node:")) reached.push(`${id} (from ${importer ?? "?"})`)
        return null
      }
    }
    const output = await build({
      configFile: false,
      logLevel: "silent",
      root: SOURCES,
      plugins: [noNodeBuiltins],
      build: {
        write: false,
        minify: false,
        lib: { entry: join(SOURCES, "index.ts"), formats: ["es"], fileName: "client" }
      }
    })
    assert.deepStrictEqual(reached, [])
    const chunks = (Array.isArray(output) ? output : [output]).flatMap((o) => "output" in o ? o.output : [])
    const code = chunks.map((chunk) => chunk.type === "chunk" ? chunk.code : "").join("\n")
    // The bundle holds the orchestrator and the stores, not an empty shell.
    assert.include(code, "makeOrchestrator")
    assert.include(code, "makeChatStore")
  })

  it("its sources use no Node global", () => {
    const found: Array<string> = []
    for (const file of sourceFiles(SOURCES)) {
      const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")
      for (const global of ["process", "Buffer", "__dirname", "__filename", "require", "global", "setImmediate"]) {
        if (new RegExp(`(?<![.\\w])${global}\\s*[.(\\[]`).test(text)) found.push(`${file}: ${global}`)
      }
    }
    assert.isAbove(sourceFiles(SOURCES).length, 10)
    assert.deepStrictEqual(found, [])
  })
})
