/**
 * `OTEL_EXPORTER_OTLP_ENDPOINT`: a chat turn's spans reach an OTLP/HTTP
 * collector (a `node:http` fake here, taking OTLP JSON) with the GenAI
 * semantic conventions — `invoke_agent` for the turn, `chat {model}` for each
 * provider call, `execute_tool {name}` for a job tool the server executed —
 * and no prompt or message content unless `OTEL_CAPTURE_CONTENT=on`.
 *
 * The server is built in a scope of the test's own: closing it flushes the
 * exporter, so everything the turn made has been sent when the test looks.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ProviderConfig from "@switchboard/providers"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { ProviderError } from "@switchboard/providers"
import type { ProviderAdapter, Transcriber } from "@switchboard/providers"
import * as Tracing from "../../src/telemetry/Tracing.ts"
import { makeFakeSubagents } from "../support/FakeSubagents.ts"
import { layerTestServer, postJsonAt, requestAt } from "../support/TestServer.ts"

interface OtlpValue {
  readonly stringValue?: string
  readonly intValue?: string | number
  readonly boolValue?: boolean
  readonly doubleValue?: number
}

interface ExportedSpan {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: OtlpValue }>
}

/** A fake collector: every `POST /v1/traces` body (OTLP JSON) kept as it came. */
const collector = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ readonly url: string; readonly bodies: Array<string>; readonly paths: Array<string>; readonly close: () => void }>((resolve) => {
      const bodies: Array<string> = []
      const paths: Array<string> = []
      const server = createServer((request, response) => {
        let body = ""
        request.setEncoding("utf8").on("data", (chunk: string) => body += chunk).on("end", () => {
          paths.push(`${request.method} ${request.url} ${request.headers["content-type"]}`)
          bodies.push(body)
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resolve({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          bodies,
          paths,
          close: () => void server.close()
        }))
    })
  ),
  (c) => Effect.sync(c.close)
)

const spansOf = (bodies: ReadonlyArray<string>): Array<ExportedSpan> =>
  bodies.flatMap((body) =>
    (JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<ExportedSpan> }> }> }).resourceSpans
      .flatMap((r) => r.scopeSpans.flatMap((s) => s.spans))
  )

const attr = (span: ExportedSpan | undefined, key: string) => {
  const value = span?.attributes.find((a) => a.key === key)?.value
  if (value === undefined) return undefined
  return value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue
}

/** Whether `span` is `ancestor` or under it. */
const descends = (spans: ReadonlyArray<ExportedSpan>, span: ExportedSpan, ancestor: ExportedSpan): boolean => {
  let current: ExportedSpan | undefined = span
  while (current !== undefined) {
    if (current.spanId === ancestor.spanId) return true
    current = spans.find((s) => s.spanId === current!.parentSpanId)
  }
  return false
}

const SECRET = "SECRET-PROMPT-7731"

/** A scripted provider whose answer to a message asking for research is a `research` job tool call. */
const scriptFile = () => {
  const dir = mkdtempSync(join(tmpdir(), "switchboard-otlp-"))
  const path = join(dir, "script.json")
  writeFileSync(path, JSON.stringify({
    rules: [
      {
        when: { lastRole: "user", contains: "research" },
        reply: { content: "", toolCalls: [{ name: "research", args: { question: "{{lastUserMessage}}" } }] }
      },
      { when: { lastRole: "tool", tool: "research" }, reply: { content: "Researching it." } }
    ],
    fallback: { content: "You said: {{lastUserMessage}}" }
  }))
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Runs `turn` against a server built with `env` (the tracing settings included) and the provider,
 * then closes it (the exporter flushes) and answers the spans the collector received.
 */
const tracedRun = <E, R>(
  provider: Layer.Layer<ProviderAdapter | Transcriber, E, R>,
  env: Record<string, string>,
  turn: (base: string) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const otlp = yield* collector
    const settings = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }
    const subagents = makeFakeSubagents()
    const server = layerTestServer(provider, settings, { subagents: subagents.layer }).pipe(
      Layer.provide(Tracing.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(settings)))))
    )
    yield* Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(server)
      const address = Context.get(context, HttpServer.HttpServer).address
      if (address._tag === "UnixPathAddress") return yield* Effect.die("a TCP address was expected")
      yield* turn(`http://127.0.0.1:${address.port}`)
    }))
    return { spans: spansOf(otlp.bodies), bodies: otlp.bodies, paths: otlp.paths }
  })

const scriptedEnv = (script: string, capture: "on" | "off") => ({
  LLM_PROVIDER: "scripted",
  LLM_MODEL: "scripted-model-1",
  LLM_API_KEY: "sk-never-in-a-span-0042",
  LLM_SCRIPT: script,
  OTEL_CAPTURE_CONTENT: capture
})

const chatTurn = (chatId: string) => (base: string) =>
  Effect.gen(function*() {
    const answer = yield* postJsonAt(base, "/api/agent/chat", {
      chatId,
      messages: [{ id: "u1", role: "user", content: `${SECRET}: please research sigma.js`, timestamp: 1 }]
    })
    assert.strictEqual(answer.status, 200, answer.text)
    assert.strictEqual(answer.json.content, "Researching it.")
    assert.strictEqual(answer.json.jobs?.length, 1)
  })

describe("OTLP traces", () => {
  it.live("a scripted chat turn: invoke_agent, chat {model} and execute_tool spans with the GenAI attributes, no content", () =>
    Effect.gen(function*() {
      const script = scriptFile()
      yield* Effect.addFinalizer(() => Effect.sync(script.remove))
      const { bodies, paths, spans } = yield* tracedRun(ProviderConfig.layer, scriptedEnv(script.path, "off"), chatTurn("chat-otel-1"))

      assert.isTrue(paths.every((p) => p.startsWith("POST /v1/traces application/json")), paths.join("\n"))
      const agent = spans.find((s) => s.name === "invoke_agent")
      assert.isDefined(agent, spans.map((s) => s.name).join(", "))
      assert.strictEqual(attr(agent, "gen_ai.operation.name"), "invoke_agent")
      assert.strictEqual(attr(agent, "gen_ai.conversation.id"), "chat-otel-1")
      assert.strictEqual(attr(agent, "gen_ai.agent.name"), "media-editor")
      assert.strictEqual(attr(agent, "gen_ai.provider.name"), "scripted")

      // Two provider calls: the one that called the tool, the one that answered its result.
      const calls = spans.filter((s) => s.name === "chat scripted-model-1")
      assert.strictEqual(calls.length, 2, spans.map((s) => s.name).join(", "))
      for (const call of calls) {
        assert.isTrue(descends(spans, call, agent!), "the provider call is under the turn")
        assert.strictEqual(attr(call, "gen_ai.operation.name"), "chat")
        assert.strictEqual(attr(call, "gen_ai.provider.name"), "scripted")
        assert.strictEqual(attr(call, "gen_ai.request.model"), "scripted-model-1")
        assert.strictEqual(attr(call, "gen_ai.conversation.id"), "chat-otel-1")
        assert.isUndefined(attr(call, "gen_ai.input.messages"))
      }

      const tool = spans.find((s) => s.name === "execute_tool research")
      assert.isDefined(tool)
      assert.isTrue(descends(spans, tool!, agent!), "the tool is under the turn")
      assert.strictEqual(attr(tool, "gen_ai.tool.name"), "research")
      assert.match(String(attr(tool, "switchboard.job_id")), /^job_/)
      assert.isUndefined(attr(tool, "gen_ai.tool.call.arguments"))

      // Neither the prompt nor the key, anywhere in what was exported.
      for (const body of bodies) {
        assert.notInclude(body, SECRET)
        assert.notInclude(body, "sigma.js")
        assert.notInclude(body, "sk-never-in-a-span")
      }
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.live("with OTEL_CAPTURE_CONTENT=on, the provider calls carry the messages and the tool its arguments", () =>
    Effect.gen(function*() {
      const script = scriptFile()
      yield* Effect.addFinalizer(() => Effect.sync(script.remove))
      const { bodies, spans } = yield* tracedRun(ProviderConfig.layer, scriptedEnv(script.path, "on"), chatTurn("chat-otel-2"))
      const [first] = spans.filter((s) => s.name === "chat scripted-model-1")
      assert.include(String(attr(first, "gen_ai.input.messages")), SECRET)
      assert.include(String(attr(first, "gen_ai.output.messages")), "research")
      assert.include(String(attr(spans.find((s) => s.name === "execute_tool research"), "gen_ai.tool.call.arguments")), SECRET)
      // Content, yes; the key, never.
      for (const body of bodies) assert.notInclude(body, "sk-never-in-a-span")
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.live("the usage a provider reports is on its chat span and summed on the turn's", () =>
    Effect.gen(function*() {
      const fake = makeFakeProvider()
      fake.answerWith(() => Effect.succeed({ content: "ok", usage: { inputTokens: 120, outputTokens: 30 } }))
      const { spans } = yield* tracedRun(fake.layer, { LLM_PROVIDER: "openai-compatible", LLM_MODEL: "gpt-test" }, (base) =>
        Effect.gen(function*() {
          const answer = yield* postJsonAt(base, "/api/agent/chat", {
            messages: [{ id: "u1", role: "user", content: "hello", timestamp: 1 }]
          })
          assert.strictEqual(answer.status, 200, answer.text)
        }))
      const call = spans.find((s) => s.name === "chat gpt-test")
      assert.strictEqual(attr(call, "gen_ai.provider.name"), "openai")
      assert.strictEqual(attr(call, "gen_ai.usage.input_tokens"), 120)
      assert.strictEqual(attr(call, "gen_ai.usage.output_tokens"), 30)
      const agent = spans.find((s) => s.name === "invoke_agent")
      assert.isTrue(descends(spans, call!, agent!), "the provider call is under the turn")
      assert.strictEqual(attr(agent, "gen_ai.usage.input_tokens"), 120)
      // Without a chat: no conversation id.
      assert.isUndefined(attr(agent, "gen_ai.conversation.id"))
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.live("the probes and /metrics make no span, their statements' included, whatever their query", () =>
    Effect.gen(function*() {
      const fake = makeFakeProvider()
      const probes = ["/metrics", "/metrics?x=1", "/readyz", "/readyz?full", "/healthz", "/healthz?x"]
      // What a probe's span would show: its path, or one of the statements the two probes that read the database make.
      const probeSpan = /\/metrics|\/readyz|\/healthz|count\(\*\)::int AS n FROM effect_sql_migrations|statement_timeout|GROUP BY phase, status/
      const { spans } = yield* tracedRun(fake.layer, { LLM_PROVIDER: "openai-compatible", LLM_MODEL: "gpt-test" }, (base) =>
        Effect.gen(function*() {
          for (const path of probes) assert.strictEqual((yield* requestAt(base, path)).status, 200, path)
          // A chat turn after them: what it exports shows the collector received the run's spans.
          const answer = yield* postJsonAt(base, "/api/agent/chat", { messages: [{ id: "u1", role: "user", content: "hi", timestamp: 1 }] })
          assert.strictEqual(answer.status, 200)
        }))
      assert.isDefined(spans.find((s) => s.name === "invoke_agent"))
      const probed = spans.filter((s) => probeSpan.test(JSON.stringify(s)))
      assert.deepStrictEqual(probed.map((s) => JSON.stringify(s.attributes)), [])
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.live("a failure is exported as its kind: neither its message (a provider may quote the request) nor a log line's", () =>
    Effect.gen(function*() {
      const run = (capture: "on" | "off") => {
        const fake = makeFakeProvider()
        fake.answerWith(() => Effect.fail(new ProviderError({ reason: "Status", status: 400, message: `the provider refused: ${SECRET}` })))
        return tracedRun(fake.layer, { LLM_PROVIDER: "anthropic", LLM_MODEL: "claude-test", OTEL_CAPTURE_CONTENT: capture }, (base) =>
          Effect.gen(function*() {
            const answer = yield* postJsonAt(base, "/api/agent/chat", { messages: [{ id: "u1", role: "user", content: "hi", timestamp: 1 }] })
            assert.strictEqual(answer.status, 502, answer.text)
          }))
      }
      const off = yield* run("off")
      const call = off.spans.find((s) => s.name === "chat claude-test")
      assert.strictEqual(attr(call, "error.type"), "Status")
      assert.strictEqual(attr(call, "gen_ai.provider.name"), "anthropic")
      assert.include(off.bodies.join(""), "ProviderError (Status 400)")
      for (const body of off.bodies) assert.notInclude(body, SECRET)
      // The same failure with content captured: its message is there (so the check above is not vacuous).
      const on = yield* run("on")
      assert.include(on.bodies.join(""), SECRET)
    }).pipe(Effect.scoped), { timeout: 60_000 })
})
