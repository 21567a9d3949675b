/**
 * The telemetry variables are held to what they accept at start-up, as every
 * setting is (`system/Settings.ts`): a bad value stops the server (the
 * production build, as `npm start` runs it) with one line naming the variable
 * and what is accepted, before anything starts; `METRICS_TOKEN`, a credential,
 * is never shown.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { invalidSettings } from "../../src/system/Settings.ts"
import { tracesUrl } from "../../src/telemetry/Tracing.ts"
import { runServerProcess } from "../support/ServerProcess.ts"

const REFUSED: ReadonlyArray<readonly [Record<string, string>, string, string]> = [
  [{ OTEL_EXPORTER_OTLP_ENDPOINT: "127.0.0.1:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT", "an http(s) URL"],
  [{ OTEL_CAPTURE_CONTENT: "yes" }, "OTEL_CAPTURE_CONTENT", "on or off"],
  [{ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf or http/json"]
]

describe("telemetry settings", () => {
  it.live("a bad value stops the process with one line naming the variable and what it accepts", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "switchboard-telemetry-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
      const outcomes = yield* Effect.forEach(REFUSED, ([vars]) => runServerProcess({ DATA_DIR: dataDir, ...vars }), { concurrency: 2 })
      REFUSED.forEach(([vars, name, expected], i) => {
        const { code, output } = outcomes[i]!
        const label = `${name}: ${output}`
        assert.notStrictEqual(code, 0, label)
        const lines = output.trimEnd().split("\n")
        assert.strictEqual(lines.length, 1, label)
        assert.match(lines[0]!, /^Refusing to start: /, label)
        assert.include(lines[0], name, label)
        assert.include(lines[0], JSON.stringify(vars[name]), label)
        assert.include(lines[0], expected, label)
      })
    }).pipe(Effect.scoped), { timeout: 120_000 })

  it("what each accepts; blank counts as unset; METRICS_TOKEN is a credential, never shown", () => {
    assert.deepStrictEqual(invalidSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example:4318/",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_CAPTURE_CONTENT: "on",
      OTEL_SERVICE_NAME: "switchboard-eu",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,team=media%20tools",
      METRICS_TOKEN: "m-0123456789"
    }), [])
    assert.deepStrictEqual(invalidSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: " ", OTEL_RESOURCE_ATTRIBUTES: "", METRICS_TOKEN: "" }), [])
    assert.strictEqual(invalidSettings({ OTEL_RESOURCE_ATTRIBUTES: "novalue" }).length, 1)
    assert.strictEqual(invalidSettings({ OTEL_RESOURCE_ATTRIBUTES: "a=%E0%A4%A" }).length, 1)
    assert.strictEqual(invalidSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://collector" }).length, 1)
  })

  it("traces go to {endpoint}/v1/traces", () => {
    assert.strictEqual(tracesUrl("http://127.0.0.1:4318"), "http://127.0.0.1:4318/v1/traces")
    assert.strictEqual(tracesUrl("https://otel.example/base/"), "https://otel.example/base/v1/traces")
  })
})
