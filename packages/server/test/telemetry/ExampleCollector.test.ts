/**
 * `examples/otlp-collector.ts`, the collector docs/observability.md's "Trying
 * it" runs: started as printed there, it prints a GenAI span as a line with
 * its attributes, leaves other spans out unless `--all`, and says what to set
 * when it is sent protobuf.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { freePort } from "../support/ServerProcess.ts"

const root = path.resolve(import.meta.dirname, "../../../..")

const span = (name: string, attributes: Record<string, string>) => ({
  name,
  startTimeUnixNano: "1000000000",
  endTimeUnixNano: "1004500000",
  attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: { stringValue: value } }))
})

const traces = {
  resourceSpans: [{
    scopeSpans: [{
      spans: [
        span("chat demo", { "gen_ai.operation.name": "chat", "gen_ai.request.model": "demo", "switchboard.call_kind": "chat" }),
        span("postgres", { "db.system": "postgresql" })
      ]
    }]
  }]
}

/** The collector with `args`, fed one JSON request and one protobuf one; everything it printed. */
const collect = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const port = yield* freePort
    const child = spawn(path.join(root, "node_modules/.bin/node"), [path.join(root, "examples/otlp-collector.ts"), String(port), ...args])
    yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => void (output += chunk.toString("utf8")))
    yield* Effect.promise(() => new Promise<void>((ready) => child.stdout.once("data", () => ready())))
    const post = (body: string, contentType: string) =>
      Effect.promise(() => fetch(`http://127.0.0.1:${port}/v1/traces`, { method: "POST", headers: { "content-type": contentType }, body }))
    const json = yield* post(JSON.stringify(traces), "application/json")
    const protobuf = yield* post("\u0000", "application/x-protobuf")
    yield* Effect.sleep("100 millis")
    return { output, json: json.status, protobuf: protobuf.status }
  })

describe("examples/otlp-collector.ts", () => {
  it.live("prints the GenAI spans with their attributes; --all prints every span", () =>
    Effect.gen(function*() {
      const genAi = yield* collect([])
      assert.strictEqual(genAi.json, 200)
      assert.include(genAi.output, `chat demo (4.5 ms)  gen_ai.operation.name="chat" gen_ai.request.model="demo" switchboard.call_kind="chat"`)
      assert.notInclude(genAi.output, "postgres")
      assert.strictEqual(genAi.protobuf, 415)
      assert.include(genAi.output, "OTEL_EXPORTER_OTLP_PROTOCOL=http/json")
      const all = yield* collect(["--all"])
      assert.include(all.output, "postgres (4.5 ms)")
    }).pipe(Effect.scoped), 30_000)
})
