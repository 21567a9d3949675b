/**
 * Token usage (docs/usage.md) over HTTP: every provider call that answered is
 * counted against what it served — a chat turn's rounds, the sub-agent's
 * steps against its job, the wake turn against the chat and the job — and
 * `GET /admin/usage` totals them by the grouping asked for.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ProviderChatResponse } from "@switchboard/domain"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { oneCallResearcher } from "../support/FakeSubagents.ts"
import { chat, eventually, teacher, transcriptOf, user } from "../support/JobsHelpers.ts"
import { readEventStream, streamInit } from "../support/EventStream.ts"
import { baseUrl, layerTestServer, request } from "../support/TestServer.ts"

const ADMIN_TOKEN = "usage-admin-token"
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

const fake = makeFakeProvider()
const withUsage = (response: ProviderChatResponse): ProviderChatResponse => ({
  ...response,
  usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 2 }
})

/** A research sub-agent asking the provider once (its own model). */
const researcher = oneCallResearcher()

const usage = (query: string) =>
  Effect.map(request(`/admin/usage?${query}`, { headers: admin }), (res) => {
    assert.strictEqual(res.status, 200, res.text)
    return res.json as { rows: Array<Row>; from: string; to: string; truncated: boolean }
  })

interface Row {
  readonly key: string
  readonly calls: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cachedInputTokens: number
}

const rowOf = (rows: ReadonlyArray<Row>, key: string) => rows.find((row) => row.key === key)

describe("token usage", () => {
  layer(
    layerTestServer(fake.layer, { ADMIN_TOKEN, LLM_MODEL: "chat-model" }, { subagents: researcher }),
    { excludeTestServices: true }
  )("over HTTP", (it) => {
    it.effect("a chat turn, its job's sub-agent and the wake turn are each counted against what they served", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(withUsage(params.model === "research-model" ? { content: "the brief" } : teacher(params))))
        const res = yield* chat("usage-1", [user("u1", "research sigma.js v3")])
        assert.strictEqual(res.status, 200, res.text)
        const jobId = res.json.jobs[0].id as string
        yield* eventually(transcriptOf("usage-1"), (t) => t.at(-1)?.content.startsWith("wake answer") === true, "the wake answer")

        const byKind = yield* usage("chatId=usage-1&groupBy=kind")
        // The turn: the dispatching round and the round after the acknowledgement.
        assert.deepStrictEqual(rowOf(byKind.rows, "chat"), { key: "chat", calls: 2, inputTokens: 20, outputTokens: 10, cachedInputTokens: 4 })
        assert.deepStrictEqual(rowOf(byKind.rows, "job"), { key: "job", calls: 1, inputTokens: 10, outputTokens: 5, cachedInputTokens: 2 })
        assert.deepStrictEqual(rowOf(byKind.rows, "wake"), { key: "wake", calls: 1, inputTokens: 10, outputTokens: 5, cachedInputTokens: 2 })
        assert.strictEqual(byKind.rows.length, 3)

        const byModel = yield* usage("chatId=usage-1&groupBy=model")
        assert.deepStrictEqual(byModel.rows.map((r) => [r.key, r.calls]), [["chat-model", 3], ["research-model", 1]])
        const byChat = yield* usage("chatId=usage-1&groupBy=chat")
        assert.deepStrictEqual(byChat.rows.map((r) => [r.key, r.calls]), [["usage-1", 4]])
        // Chat calls serve no host: grouped by host, there is nothing to show.
        assert.deepStrictEqual((yield* usage("chatId=usage-1&groupBy=host")).rows, [])

        // The sub-agent's and the wake's calls are counted against the job as well.
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ kind: string; job_id: string }>`
          SELECT kind, job_id FROM usage_hourly WHERE chat_id = 'usage-1' ORDER BY kind`
        assert.deepStrictEqual(stored.map((r) => [r.kind, r.job_id]), [["chat", ""], ["job", jobId], ["wake", jobId]])
      }))

    it.effect("a call without usage is counted as a call; another chat's calls are not in this one's totals", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        assert.strictEqual((yield* chat("usage-2", [user("u1", "hello")])).status, 200)
        assert.strictEqual((yield* chat("usage-2", [user("u2", "again")])).status, 200)
        const rows = (yield* usage("chatId=usage-2")).rows
        assert.deepStrictEqual(rows, [{ key: "chat", calls: 2, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 }])
        const everything = yield* usage("groupBy=chat")
        assert.isDefined(rowOf(everything.rows, "usage-1"))
        assert.isDefined(rowOf(everything.rows, "usage-2"))
      }))

    it.effect("the window: from rounded down to its hour, to excluded; the default is the last 24 hours", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(withUsage(teacher(params))))
        assert.strictEqual((yield* chat("usage-3", [user("u1", "hello")])).status, 200)
        const now = Date.now()
        const recent = yield* usage("chatId=usage-3")
        assert.strictEqual(rowOf(recent.rows, "chat")?.calls, 1)
        assert.isAtMost(Math.abs(Date.parse(recent.to) - now), 60_000)
        assert.strictEqual(Date.parse(recent.to) - Date.parse(recent.from) >= 86_400_000, true)
        assert.strictEqual(Date.parse(recent.from) % 3_600_000, 0, "from is an hour")
        assert.isFalse(recent.truncated)
        // A window that ended an hour ago holds none of it; one that starts within this hour does.
        const past = yield* usage(`chatId=usage-3&to=${new Date(now - 3_600_000).toISOString()}`)
        assert.deepStrictEqual(past.rows, [])
        const thisHour = yield* usage(`chatId=usage-3&from=${new Date(now).toISOString()}&to=${new Date(now + 60_000).toISOString()}`)
        assert.strictEqual(rowOf(thisHour.rows, "chat")?.calls, 1, "from is rounded down to its hour")
      }))

    it.effect("a streamed turn is counted as a whole one is, with the usage its finish reports", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(withUsage(teacher(params))))
        const base = yield* baseUrl
        const read = yield* readEventStream(`${base}/api/agent/chat`, streamInit({ chatId: "usage-4", messages: [user("u1", "hello")] }))
        assert.strictEqual(read.status, 200)
        const finish = read.chunks.find((c) => c.type === "finish")
        assert.deepInclude((finish as { messageMetadata: object }).messageMetadata, { usage: { inputTokens: 10, outputTokens: 5 } })
        assert.deepStrictEqual((yield* usage("chatId=usage-4")).rows, [
          { key: "chat", calls: 1, inputTokens: 10, outputTokens: 5, cachedInputTokens: 2 }
        ])
      }))

    it.effect("usage is kept as long as decisions: the sweep deletes the hours past PLANNER_DECISION_RETENTION", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const old = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 8 * 86_400_000).toISOString()
        yield* sql`
          INSERT INTO usage_hourly (hour, kind, chat_id, calls, input_tokens, output_tokens, cached_input_tokens)
          VALUES (${old}::timestamptz, 'chat', 'usage-old', 1, 1, 1, 0)`
        fake.answerWith((params) => Effect.succeed(withUsage(teacher(params))))
        assert.strictEqual((yield* chat("usage-5", [user("u1", "hello")])).status, 200)
        assert.strictEqual((yield* usage("chatId=usage-5")).rows.length, 1, "flushed")

        const pruned = yield* request("/admin/planner-decisions/prune", { method: "POST", headers: admin })
        assert.strictEqual(pruned.status, 200, pruned.text)
        assert.isAtLeast(pruned.json.usageRows, 1)
        const left = yield* sql<{ chat_id: string }>`
          SELECT chat_id FROM usage_hourly WHERE chat_id IN ('usage-old', 'usage-5')`
        assert.deepStrictEqual(left.map((r) => r.chat_id), ["usage-5"], "the recent hour stays")
      }))

    it.effect("bad queries are 400 naming what is wrong, without the admin token 401", () =>
      Effect.gen(function*() {
        const bad = [
          ["groupBy=day", "groupBy"],
          ["from=yesterday", "from"],
          ["to=1969-12-31T00:00:00Z", "to"],
          ["hostId=" + "x".repeat(200), "hostId"],
          ["from=2026-12-03T10:00:00Z&to=2026-12-03T09:00:00Z", "from must be before to"]
        ] as const
        for (const [query, named] of bad) {
          const res = yield* request(`/admin/usage?${query}`, { headers: admin })
          assert.strictEqual(res.status, 400, `${query}: ${res.text}`)
          assert.strictEqual(res.json.code, "invalid_request")
          assert.include(res.json.error, named, query)
        }
        const anonymous = yield* request("/admin/usage")
        assert.strictEqual(anonymous.status, 401)
        assert.strictEqual(anonymous.json.code, "unauthenticated")
      }))
  })
})
