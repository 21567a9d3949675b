/**
 * `JOB_MAX_ACTIVE_PER_CHAT`: a chat has at most that many sub-agents at work (dispatched, their
 * results not yet delivered). A model that asks for more in one answer — or while earlier ones
 * still run — gets the rest answered with an error it can read, and no job is made for them; once
 * results have come in, there is room again.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage, ProviderChatParams, ProviderChatResponse } from "@switchboard/domain"
import { subagentResultOf } from "@switchboard/domain"
import { Effect } from "effect"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { makeFakeSubagents, researchResult } from "../support/FakeSubagents.ts"
import { chat, jobsOf, settled, teacher, transcriptOf, user } from "../support/JobsHelpers.ts"
import { layerTestServer } from "../support/TestServer.ts"

/**
 * "fan out N" dispatches N research jobs in one answer, and so does a steer whose brief says
 * "fan out N" (a wake turn that dispatches again); everything else as the teacher.
 */
const model = (params: ProviderChatParams): Effect.Effect<ProviderChatResponse> => {
  const last = params.messages.at(-1)
  const again = last !== undefined && subagentResultOf(last) !== undefined ? /fan out (\d+)/.exec(last.content) : null
  if (again !== null) {
    return Effect.succeed({ content: "", toolCalls: [{ id: `call_again_${params.messages.length}`, name: "research", args: { question: "more" } }] })
  }
  const fan = last?.role === "user" ? /^fan out (\d+)$/.exec(last.content) : null
  if (fan === null) return Effect.succeed(teacher(params))
  const n = params.messages.length
  return Effect.succeed({
    content: "",
    toolCalls: Array.from({ length: Number(fan[1]) }, (_, i) => ({ id: `call_${n}_${i}`, name: "research", args: { question: `q${i}` } }))
  })
}

const toolErrors = (transcript: ReadonlyArray<ChatMessage>) =>
  transcript.flatMap((m) => m.toolResult?.error === undefined ? [] : [m.toolResult.error])

describe("JOB_MAX_ACTIVE_PER_CHAT", () => {
  const fake = makeFakeProvider()
  const subagents = makeFakeSubagents()
  fake.answerWith(model)

  layer(layerTestServer(fake.layer, { JOB_MAX_ACTIVE_PER_CHAT: "2" }, { subagents: subagents.layer }), { excludeTestServices: true })("2", (it) => {
    it.effect("three calls in one answer: two jobs, the third an error the model reads; a later call waits for room", () =>
      Effect.gen(function*() {
        subagents.gated()
        const chatId = "fan-out"
        const first = yield* chat(chatId, [user("u1", "fan out 3")])
        assert.strictEqual(first.status, 200, first.text)
        assert.strictEqual(first.json.jobs.length, 2)
        assert.strictEqual((yield* jobsOf(chatId)).length, 2)
        const [refusal] = toolErrors(yield* transcriptOf(chatId))
        assert.include(refusal, "research was not dispatched")
        assert.include(refusal, "JOB_MAX_ACTIVE_PER_CHAT")
        // The refused call's error went to the model with the two acknowledgements.
        const toolMessages = fake.calls.at(-1)!.messages.filter((m) => m.role === "tool")
        assert.strictEqual(toolMessages.length, 3)

        // Two at work: another call is refused too, and makes no job.
        const second = yield* chat(chatId, [user("u2", "fan out 1")])
        assert.strictEqual(second.status, 200, second.text)
        assert.isUndefined(second.json.jobs)
        assert.strictEqual((yield* jobsOf(chatId)).length, 2)

        // Their results come in (steered, woken, settled): room again.
        const runs = yield* subagents.waitForRuns(2)
        for (const run of runs) yield* subagents.finish(run.jobId, researchResult("found it"))
        yield* settled(chatId, 2)
        const third = yield* chat(chatId, [user("u3", "fan out 1")])
        assert.strictEqual(third.status, 200, third.text)
        assert.strictEqual(third.json.jobs.length, 1)
        assert.strictEqual((yield* jobsOf(chatId)).length, 3)
      }))

    it.effect("the limit is per chat: another chat dispatches beside a full one", () =>
      Effect.gen(function*() {
        subagents.gated()
        const full = yield* chat("busy-chat", [user("u1", "fan out 2")])
        assert.strictEqual(full.json.jobs.length, 2)
        const other = yield* chat("quiet-chat", [user("u1", "fan out 2")])
        assert.strictEqual(other.json.jobs.length, 2)
      }))
  })

  layer(layerTestServer(fake.layer, { CHAT_TRANSCRIPT_MAX_MESSAGES: "4" }, { subagents: subagents.layer }), { excludeTestServices: true })(
    "a chat at its limit",
    (it) => {
      it.effect("a wake turn in a full chat that dispatches again makes no job: the chain ends", () =>
        Effect.gen(function*() {
          subagents.gated()
          const chatId = "full-chain"
          // user, the call, its acknowledgement, the answer: 4 messages, the chat's limit.
          const first = yield* chat(chatId, [user("u1", "fan out 1")])
          assert.strictEqual(first.json.jobs.length, 1)
          assert.strictEqual((yield* transcriptOf(chatId)).length, 4)
          assert.strictEqual((yield* chat(chatId, [user("u2", "hello?")])).status, 409, "the chat takes no client turn")

          // The result comes in and its wake turn runs; the model dispatches again: refused, no job.
          yield* subagents.finish(first.json.jobs[0].id, researchResult("fan out 1"))
          yield* settled(chatId, 1)
          const refusals = toolErrors(yield* transcriptOf(chatId))
          assert.strictEqual(refusals.length, 1)
          assert.include(refusals[0], "this chat is at its limit")
          assert.strictEqual((yield* jobsOf(chatId)).length, 1)
        }))
    }
  )
})
