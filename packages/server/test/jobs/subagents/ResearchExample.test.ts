/**
 * The README's research example, sub-agent half: `examples/search-server.ts`
 * (run as its own process, as a user would) and the `scripted` provider with
 * `examples/scripted-research.json` drive the real research sub-agent through
 * a search, a page read and a brief sourced from that page.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { ResearchResult } from "@switchboard/domain"
import { spawn } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Scripted } from "@switchboard/providers"
import * as RealSubagents from "../../../src/jobs/subagents/RealSubagents.ts"
import { runJob, settings } from "./Harness.ts"

const examples = fileURLToPath(new URL("../../../../../examples/", import.meta.url))

/** The example server on a free port, for the scope's lifetime. */
const exampleSearchServer = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ origin: string; stop: () => void }>((resolve, reject) => {
      const child = spawn(process.execPath, [join(examples, "search-server.ts")], {
        env: { ...process.env, PORT: "0" },
        stdio: ["ignore", "pipe", "inherit"]
      })
      child.once("error", reject)
      child.stdout.on("data", (chunk: Buffer) => {
        const origin = /search server on (http:\/\/127\.0\.0\.1:\d+)/.exec(chunk.toString())?.[1]
        if (origin !== undefined) resolve({ origin, stop: () => child.kill() })
      })
    })
  ),
  (server) => Effect.sync(server.stop)
)

/** The example script, pointed at the server's actual port instead of 8888. */
const scriptFor = (origin: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const dir = await mkdtemp(join(tmpdir(), "scripted-research-"))
      const text = (await readFile(join(examples, "scripted-research.json"), "utf8")).replaceAll("http://127.0.0.1:8888", origin)
      await writeFile(join(dir, "script.json"), text)
      return { dir, path: join(dir, "script.json") }
    }),
    ({ dir }) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

describe("README research example", () => {
  it.live("examples/search-server.ts + examples/scripted-research.json: search, read, sourced brief", () =>
    Effect.gen(function*() {
      const server = yield* exampleSearchServer
      const script = yield* scriptFor(server.origin)
      const subagents = RealSubagents.layerTest(settings({ searchUrl: server.origin })).pipe(Layer.provide(Scripted.layer(script.path)))

      const { activity, result } = yield* runJob<ResearchResult>("research", {
        question: "research what is new in sigma.js v3",
        context: "a lesson on graph rendering"
      }).pipe(Effect.provide(subagents))

      const page = `${server.origin}/pages/sigma-v3`
      assert.deepStrictEqual(activity, [`web_search: "sigma.js v3"`, `fetch_url: ${page}`])
      assert.deepStrictEqual(result.sources, [{ title: "Sigma.js v3: what changed", url: page }])
      assert.match(result.brief, /^From the release notes I read: /)
      assert.include(result.brief, "Rendering goes through WebGL programs")
    }))
})
