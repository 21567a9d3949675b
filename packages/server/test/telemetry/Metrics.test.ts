/**
 * `GET /metrics`: Prometheus text a parser reads line by line, behind
 * `METRICS_TOKEN` when it is set; counters that move with the requests and
 * provider calls this process served; the jobs as the database holds them at
 * scrape time; a delivered steer's lag.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { recordRequest } from "../../src/telemetry/Metrics.ts"
import { makeFakeSubagents, researchResult } from "../support/FakeSubagents.ts"
import { baseUrl, layerTestServer, postJson, request } from "../support/TestServer.ts"

const TOKEN = "metrics-token-5150"

/** One sample: its name, its labels, its value. */
interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/**
 * The text exposition format, strictly: `# HELP`/`# TYPE` lines, then samples `name{labels} value`
 * of a family whose TYPE came first. Throws on any other line.
 */
const parse = (text: string): Array<Sample> => {
  const typed = new Set<string>()
  const samples: Array<Sample> = []
  for (const line of text.split("\n")) {
    if (line === "") continue
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type) {
      typed.add(type[1]!)
      continue
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/.exec(line)
    if (!sample) throw new Error(`not a metric line: ${line}`)
    const name = sample[1]!
    const family = name.replace(/_(bucket|sum|count)$/, "")
    if (!typed.has(name) && !typed.has(family)) throw new Error(`a sample before its TYPE: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, key, value] of (sample[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!
    samples.push({ name, labels, value: Number(sample[3]) })
  }
  return samples
}

/** The sum of the samples named so whose labels include `labels`. */
const valueOf = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)

const scrape = (headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) =>
  Effect.flatMap(baseUrl, (base) =>
    Effect.promise(async () => {
      const response = await fetch(`${base}/metrics`, { headers })
      return { status: response.status, contentType: response.headers.get("content-type") ?? "", text: await response.text() }
    }))

const samples = Effect.map(scrape(), (r) => {
  assert.strictEqual(r.status, 200, r.text)
  return parse(r.text)
})

const user = (id: string, content: string) => ({ id, role: "user", content, timestamp: 1 })

describe("/metrics", () => {
  const fake = makeFakeProvider()
  const subagents = makeFakeSubagents()
  layer(
    layerTestServer(fake.layer, { METRICS_TOKEN: TOKEN, LLM_PROVIDER: "openai-compatible", LLM_MODEL: "gpt-metrics" }, { subagents: subagents.layer }),
    { excludeTestServices: true }
  )("served", (it) => {
    it.effect("needs METRICS_TOKEN as a bearer token: 401 JSON unauthenticated without it or with another", () =>
      Effect.gen(function*() {
        for (const headers of [{}, { authorization: "Bearer nope" }, { authorization: TOKEN }]) {
          const refused = yield* scrape(headers)
          assert.strictEqual(refused.status, 401, JSON.stringify(headers))
          assert.include(refused.contentType, "application/json")
          const body = JSON.parse(refused.text)
          assert.strictEqual(body.code, "unauthenticated")
          assert.include(body.error, "METRICS_TOKEN")
          assert.notInclude(refused.text, TOKEN)
        }
        const served = yield* scrape()
        assert.strictEqual(served.status, 200)
        assert.match(served.contentType, /^text\/plain; version=0\.0\.4/)
        // Another method on the path: the contract's JSON 405.
        const post = yield* postJson("/metrics", {})
        assert.strictEqual(post.status, 405)
        assert.strictEqual(post.json.code, "method_not_allowed")
      }))

    it.effect("requests are counted by route template and status, 404s included, and timed", () =>
      Effect.gen(function*() {
        const before = yield* samples
        for (let i = 0; i < 3; i++) assert.strictEqual((yield* request("/healthz")).status, 200)
        assert.strictEqual((yield* request("/api/jobs?chatId=not%20valid")).status, 400)
        assert.strictEqual((yield* request("/no/such/path/12345")).status, 404)
        // A method the path has not: the router's 405, counted under the path's template.
        assert.strictEqual((yield* request("/api/chats/chat-12345/messages", { method: "PATCH" })).status, 405)
        const after = yield* samples
        const moved = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels)
        assert.strictEqual(moved("switchboard_http_requests_total", { route: "/healthz", method: "GET", status: "200" }), 3)
        assert.strictEqual(moved("switchboard_http_requests_total", { route: "/api/jobs", status: "400" }), 1)
        assert.strictEqual(moved("switchboard_http_requests_total", { route: "unmatched", status: "404" }), 1)
        assert.strictEqual(moved("switchboard_http_requests_total", { route: "/api/chats/:chatId/messages", method: "PATCH", status: "405" }), 1)
        assert.strictEqual(moved("switchboard_http_requests_total", { route: "unmatched", status: "405" }), 0)
        assert.strictEqual(moved("switchboard_http_request_duration_seconds_count", { route: "/healthz", method: "GET" }), 3)
        // The +Inf bucket holds every observation.
        assert.strictEqual(
          valueOf(after, "switchboard_http_request_duration_seconds_bucket", { route: "/healthz", le: "+Inf" }),
          valueOf(after, "switchboard_http_request_duration_seconds_count", { route: "/healthz" })
        )
        // The raw path is never a label.
        assert.isFalse(after.some((s) => Object.values(s.labels).some((v) => v.includes("12345"))))
      }))

    it.effect("a 429 answer is counted as such", () =>
      Effect.gen(function*() {
        const before = valueOf(yield* samples, "switchboard_http_429_total", { route: "/api/agent/chat" })
        // No route of this build refuses with 429 on its own: the middleware's record, as a limit's refusal makes it.
        recordRequest("/api/agent/chat", "POST", 429, 0.001)
        assert.strictEqual(valueOf(yield* samples, "switchboard_http_429_total", { route: "/api/agent/chat" }) - before, 1)
      }))

    it.effect("provider calls: duration by kind and model, tokens as reported; a steer's wake and its lag", () =>
      Effect.gen(function*() {
        subagents.instant(() => researchResult("the brief"))
        fake.answerWith((params) => {
          const last = params.messages.at(-1)!
          return Effect.succeed(
            last.role === "user" && last.content === "research it"
              ? { content: "", toolCalls: [{ id: "call_r", name: "research", args: { question: "q" } }], usage: { inputTokens: 100, outputTokens: 5 } }
              : { content: "done", usage: { inputTokens: 40, outputTokens: 2, cachedInputTokens: 10 } }
          )
        })
        const before = yield* samples
        const res = yield* postJson("/api/agent/chat", { chatId: "metrics-chat", messages: [user("u1", "research it")] })
        assert.strictEqual(res.status, 200, res.text)
        // The job runs at once; its steer's wake turn follows.
        let after = yield* samples
        for (let i = 0; i < 200 && valueOf(after, "switchboard_steer_lag_seconds_count", { job_kind: "research" }) === valueOf(before, "switchboard_steer_lag_seconds_count", { job_kind: "research" }); i++) {
          yield* Effect.sleep("50 millis")
          after = yield* samples
        }
        const moved = (name: string, labels: Record<string, string>) => valueOf(after, name, labels) - valueOf(before, name, labels)
        assert.strictEqual(moved("switchboard_steer_lag_seconds_count", { job_kind: "research" }), 1)
        const chat = { kind: "chat", provider: "openai-compatible", model: "gpt-metrics" }
        assert.strictEqual(moved("switchboard_provider_call_duration_seconds_count", { ...chat, outcome: "ok" }), 2)
        assert.strictEqual(moved("switchboard_provider_tokens_total", { ...chat, type: "input" }), 140)
        assert.strictEqual(moved("switchboard_provider_tokens_total", { ...chat, type: "output" }), 7)
        assert.strictEqual(moved("switchboard_provider_tokens_total", { ...chat, type: "cached_input" }), 10)
        assert.strictEqual(moved("switchboard_provider_call_duration_seconds_count", { kind: "wake", model: "gpt-metrics", outcome: "ok" }), 1)
      }))

    it.effect("jobs by phase and status, and the oldest waiting steer's age, are the database's at scrape time", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // A kind no runner or wake of this build claims: the rows stay as written.
        const kind = "unclaimed_kind"
        const counts = (s: ReadonlyArray<Sample>) =>
          Object.fromEntries(s.filter((x) => x.name === "switchboard_jobs").map((x) => [`${x.labels["phase"]}/${x.labels["status"]}`, x.value]))
        const before = counts(yield* samples)
        yield* sql`INSERT INTO chats (id) VALUES ('metrics-jobs') ON CONFLICT DO NOTHING`
        const job = (id: string, phase: string, status: string, finishedAgo: number | null) =>
          sql`INSERT INTO jobs (id, chat_id, kind, tool_call_id, input, phase, status, finished_at)
              VALUES (${id}, 'metrics-jobs', ${kind}, ${`call_${id}`}, '{}'::jsonb, ${phase}, ${status},
                ${finishedAgo === null ? null : sql`now() - ${finishedAgo} * interval '1 second'`})`
        yield* job("mj1", "settled", "done", 600)
        yield* job("mj2", "settled", "done", 500)
        yield* job("mj3", "settled", "error", 400)
        yield* job("mj4", "wake", "running", 3600)
        yield* job("mj5", "run", "running", null)
        const after = yield* samples
        const now = counts(after)
        const delta = (key: string) => (now[key] ?? 0) - (before[key] ?? 0)
        assert.deepStrictEqual(
          ["run/running", "wake/running", "settled/done", "settled/error"].map(delta),
          [1, 1, 2, 1]
        )
        assert.deepStrictEqual(Object.keys(now).sort(), ["run/running", "settled/done", "settled/error", "wake/running"])
        assert.isAtLeast(valueOf(after, "switchboard_jobs_oldest_wake_seconds"), 3600)
        assert.strictEqual(valueOf(after, "switchboard_metrics_database_up"), 1)
        yield* sql`DELETE FROM jobs WHERE chat_id = 'metrics-jobs'`
        assert.deepStrictEqual(counts(yield* samples), before)
      }))
  })
})
