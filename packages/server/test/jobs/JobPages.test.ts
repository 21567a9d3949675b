/**
 * `GET /api/jobs` answers a page at a time: at most `limit` jobs (default and most 1,000), ending
 * before 16 MiB of results, with `nextAfter` (the next page's `after`) when more follow — so a
 * chat with many jobs, or large results, is never one unbounded answer. `ids` lists only those of
 * the chat's jobs (what a poll asks for the results of the jobs that just settled).
 */
import { assert, describe, layer } from "@effect/vitest"
import type { JobRecord } from "@switchboard/domain"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { researchResult } from "../support/FakeSubagents.ts"
import { chat, teacher, user } from "../support/JobsHelpers.ts"
import { layerTestServer, request } from "../support/TestServer.ts"

const MiB = 1024 * 1024
const JOBS = 6

/** Every page of the chat's jobs with `query`, and the cursors that led from one to the next. */
const pages = (chatId: string, query: string) =>
  Effect.gen(function*() {
    const ids: Array<Array<string>> = []
    const cursors: Array<string | undefined> = []
    let after: string | undefined
    do {
      const res = yield* request(`/api/jobs?chatId=${chatId}&${query}${after === undefined ? "" : `&after=${after}`}`)
      assert.strictEqual(res.status, 200, res.text.slice(0, 300))
      ids.push((res.json.jobs as Array<JobRecord>).map((j) => j.id))
      after = res.json.nextAfter
      cursors.push(after)
    } while (after !== undefined)
    return { ids, cursors }
  })

describe("GET /api/jobs, a page at a time", () => {
  const fake = makeFakeProvider()
  fake.answerWith((params) => Effect.succeed(teacher(params)))

  layer(layerTestServer(fake.layer), { excludeTestServices: true })("one server", (it) => {
    it.effect("limit pages through in order; a page ends before 16 MiB of results; results=omit reads none; ids names some; a bad cursor is a 400", () =>
      Effect.gen(function*() {
        const chatId = "many-jobs"
        const opened = yield* chat(chatId, [user("u1", "hello")])
        assert.strictEqual(opened.status, 200, opened.text)
        // Settled jobs with results of ~3 MiB, stored as the runner stores them (faster than running
        // them: the listing is what is under test). The default user's chat key is its id.
        const sql = yield* SqlClient.SqlClient
        const dispatched = Array.from({ length: JOBS }, (_, i) => `job_page_${String(i).padStart(2, "0")}`)
        for (const [i, id] of dispatched.entries()) {
          const result = researchResult(`${id} `.repeat(Math.floor(3 * MiB / (id.length + 1))))
          yield* sql`INSERT INTO jobs (id, chat_id, kind, tool_call_id, input, phase, status, activity, result, finished_at)
            VALUES (${id}, ${chatId}, 'research', ${`call_${i}`}, ${JSON.stringify({ question: `q${i}` })}::jsonb, 'settled', 'done',
              'done: no sources', ${JSON.stringify(result)}::jsonb, now())`
        }

        const byTwo = yield* pages(chatId, "limit=2&results=omit")
        assert.deepStrictEqual(byTwo.ids, [0, 2, 4].map((i) => dispatched.slice(i, i + 2)))
        assert.strictEqual(byTwo.cursors.at(-1), undefined)

        // With their results (~3 MiB each, ~18 MiB in all): a page ends before 16 MiB, every job once, in order.
        const whole = yield* pages(chatId, "results=include")
        assert.deepStrictEqual(whole.ids, [dispatched.slice(0, 5), dispatched.slice(5)])

        const omitted = (yield* request(`/api/jobs?chatId=${chatId}&results=omit`)).json.jobs as Array<JobRecord>
        assert.strictEqual(omitted.length, JOBS, "without results, one page holds them all")
        assert.isTrue(omitted.every((j) => j.result === undefined))

        // By id: only those the chat has, in order, with their results; another chat's job is not this chat's.
        assert.strictEqual((yield* chat("another-chat", [user("u2", "hello")])).status, 200)
        yield* sql`INSERT INTO jobs (id, chat_id, kind, tool_call_id, input, phase, status, activity)
          VALUES ('job_elsewhere', 'another-chat', 'research', 'call_x', '{}'::jsonb, 'settled', 'done', 'done: no sources')`
        const some = yield* request(`/api/jobs?chatId=${chatId}&ids=${dispatched[4]},job_elsewhere,${dispatched[1]},job_nope,${dispatched[1]}`)
        assert.strictEqual(some.status, 200, some.text.slice(0, 300))
        assert.deepStrictEqual((some.json.jobs as Array<JobRecord>).map((j) => j.id), [dispatched[1], dispatched[4]])
        assert.isTrue((some.json.jobs as Array<JobRecord>).every((j) => j.result !== undefined))
        const hundred = Array.from({ length: 100 }, (_, i) => `job_${i}`).join(",")
        assert.strictEqual((yield* request(`/api/jobs?chatId=${chatId}&ids=${hundred}`)).status, 200)

        const beyond = yield* request(`/api/jobs?chatId=${chatId}&after=${"9".repeat(18)}`)
        assert.deepStrictEqual([beyond.status, beyond.json], [200, { jobs: [] }])
        for (const bad of [
          "after=x1", "after=-1", `after=${"9".repeat(19)}`, "limit=0", "limit=1001",
          "ids=", "ids=a,,b", "ids=a%20b", `ids=${hundred},job_100`, `ids=${"j".repeat(65)}`
        ]) {
          const res = yield* request(`/api/jobs?chatId=${chatId}&${bad}`)
          assert.strictEqual(res.status, 400, `${bad}: ${res.text}`)
          assert.strictEqual(res.json.code, "invalid_request")
        }
      }))
  })
})
