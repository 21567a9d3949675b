/**
 * The 409 retry (docs/jobs.md, "A job's life", step 3): a client turn races in between the wake's look
 * at the chat and its taking the marker. The race is made to happen, not
 * simulated: the wake's turn composer is wrapped so that, on the wake's first
 * attempt, a real client turn takes the chat's marker first; the wake then
 * gets the composer's real `TurnInFlight`, goes back to its queue, and fires
 * once the client's turn ended.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { steerMessageId, subagentResultOf } from "@switchboard/domain"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"
import { Agents } from "../../src/agents/Agents.ts"
import { ChatRepo } from "../../src/chat/ChatRepo.ts"
import { TurnComposer } from "../../src/chat/turn/TurnComposer.ts"
import { TurnStreams } from "../../src/chat/stream/TurnStreams.ts"
import * as JobRunner from "../../src/jobs/JobRunner.ts"
import { JobsConfig } from "../../src/jobs/JobsConfig.ts"
import { JobSignals } from "../../src/jobs/JobSignals.ts"
import { JobsRepo } from "../../src/jobs/JobsRepo.ts"
import * as JobTools from "../../src/jobs/JobTools.ts"
import * as WakePipeline from "../../src/jobs/WakePipeline.ts"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { makeFakeSubagents } from "../support/FakeSubagents.ts"
import { eventually, teacher, user } from "../support/JobsHelpers.ts"
import { TestDatabase } from "../support/TestDatabase.ts"
import { storedChatKey } from "../../src/users/ChatKey.ts"
import { mediaEditorDefinition } from "../../src/agents/MediaEditor.ts"

/**
 * The chat and job services on a test database, the wake pipeline and job runner given `wakeComposer`
 * (the real composer, wrapped to make a race happen); the tests' own turns use the real one.
 */
const buildPipeline = <E, R>(
  fake: ReturnType<typeof makeFakeProvider>,
  subagents: ReturnType<typeof makeFakeSubagents>,
  wakeComposer: Layer.Layer<TurnComposer, E, R>
) =>
  Effect.gen(function*() {
    const core = Layer.mergeAll(JobSignals.layer, ChatRepo.layer).pipe(
      Layer.provideMerge(JobsRepo.layer),
      Layer.provideMerge(fake.layer),
      Layer.provideMerge(TestDatabase)
    )
    const pipeline = Layer.mergeAll(WakePipeline.layer, JobRunner.layer).pipe(
      Layer.provide(wakeComposer.pipe(Layer.provide(JobTools.layerNoDeps))),
      Layer.provide(subagents.layer),
      Layer.provide(JobsConfig.layerTest({ sweepMs: 200, leaseMs: 2_000 })),
      Layer.provide(Agents.layer),
      Layer.provide(TurnStreams.layer)
    )
    const composer = TurnComposer.layerNoDeps.pipe(Layer.provide(JobTools.layerNoDeps))
    const services = yield* Layer.build(Layer.mergeAll(pipeline, composer).pipe(Layer.provideMerge(core)))
    return {
      composer: Context.get(services, TurnComposer),
      chats: Context.get(services, ChatRepo),
      jobs: Context.get(services, JobsRepo)
    }
  })

describe("the wake pipeline under a race", () => {
  it.live("a 409 (a client turn raced in) makes the wake retry; it fires once that turn ended", () =>
    Effect.gen(function*() {
      const fake = makeFakeProvider()
      const subagents = makeFakeSubagents()
      subagents.instant()
      const clientInProvider = yield* Deferred.make<void>()
      const releaseClient = yield* Deferred.make<void>()
      fake.answerWith((params) =>
        params.messages.at(-1)?.content === "racing in"
          ? Deferred.succeed(clientInProvider, undefined).pipe(Effect.andThen(Deferred.await(releaseClient)), Effect.as(teacher(params)))
          : Effect.succeed(teacher(params))
      )

      const wakeAttempts: Array<Exit.Exit<unknown, unknown>> = []
      let clientTurn: Fiber.Fiber<unknown, unknown> | undefined
      // The composer the wake pipeline gets: the real one, with a client turn injected before the wake's first try.
      const RacingComposer = Layer.effect(TurnComposer, Effect.gen(function*() {
        const real = yield* TurnComposer
        return TurnComposer.of({
          ...real,
          persisted: (input) =>
            Effect.gen(function*() {
              const isWake = input.messages.some((m) => subagentResultOf(m) !== undefined)
              if (isWake && clientTurn === undefined) {
                clientTurn = yield* Effect.forkDetach(
                  real.persisted({ chatId: input.chatId, messages: [user("u2", "racing in")], context: undefined, agent: mediaEditorDefinition })
                )
                yield* Deferred.await(clientInProvider)
              }
              const exit = yield* Effect.exit(real.persisted(input))
              if (isWake) wakeAttempts.push(exit)
              return yield* exit
            })
        })
      })).pipe(Layer.provide(TurnComposer.layerNoDeps))

      const { composer, chats, jobs } = yield* buildPipeline(fake, subagents, RacingComposer)

      const first = yield* composer.persisted({ chatId: storedChatKey("race"), messages: [user("u1", "research graphs")], context: undefined, agent: mediaEditorDefinition })
      assert.strictEqual(first._tag, "Answered")
      const jobId = first._tag === "Answered" ? first.response.jobs![0]!.id : ""

      yield* eventually(Effect.sync(() => wakeAttempts.length), (n) => n >= 1, "the wake's first attempt")
      const refused = wakeAttempts[0]!
      assert.isTrue(Exit.isFailure(refused), "the wake's first attempt was refused")
      assert.include(JSON.stringify(refused), "turn_in_flight")
      const during = yield* chats.transcript(storedChatKey("race"))
      assert.isFalse(during.some((m) => m.id === steerMessageId(jobId)), "no steer while the client's turn holds the chat")

      yield* Deferred.succeed(releaseClient, undefined)
      yield* Fiber.join(clientTurn!)
      const [job] = (yield* eventually(jobs.list(storedChatKey("race")), (list) => list.jobs[0]?.status === "done", "the job settled")).jobs
      assert.strictEqual(job!.status, "done")
      // The job settles inside the wake turn's last transaction, just before the turn returns.
      yield* eventually(Effect.sync(() => wakeAttempts.filter(Exit.isSuccess).length), (n) => n >= 1, "the wake turn's return")
      assert.strictEqual(wakeAttempts.filter(Exit.isSuccess).length, 1, "one successful wake turn")
      const after: ReadonlyArray<ChatMessage> = yield* chats.transcript(storedChatKey("race"))
      assert.deepStrictEqual(
        after.map((m) => m.role === "user" && subagentResultOf(m) ? "steer" : `${m.role}:${m.content}`),
        ["user:research graphs", "assistant:", "tool:" + after[2]!.content, "assistant:dispatched", "user:racing in", "assistant:you said: racing in", "steer", `assistant:${after.at(-1)!.content}`]
      )
      assert.match(after.at(-1)!.content, /^wake answer: Research complete/)
    }).pipe(Effect.scoped))

  /**
   * The chat is deleted between the wake's claim (its look) and its taking the marker — and, with
   * `recreate`, a client turn creates a new chat under the same id meanwhile. The wake ends on
   * `ChatNotFound` (not a defect: the marker is not taken on a chat that is gone), and never
   * writes into the new chat (its generation is not the job's).
   */
  const deletedUnderTheWake = (recreate: boolean) =>
    Effect.gen(function*() {
      const fake = makeFakeProvider()
      const subagents = makeFakeSubagents()
      subagents.instant()
      fake.answerWith((params) => Effect.succeed(teacher(params)))
      const wakeAttempts: Array<Exit.Exit<unknown, unknown>> = []
      const chatId = recreate ? "reborn" : "deleted"
      const DeletingComposer = Layer.effect(TurnComposer, Effect.gen(function*() {
        const real = yield* TurnComposer
        const chats = yield* ChatRepo
        return TurnComposer.of({
          ...real,
          persisted: (input) =>
            Effect.gen(function*() {
              const isWake = input.messages.some((m) => subagentResultOf(m) !== undefined)
              if (!isWake) return yield* real.persisted(input)
              assert.isTrue(yield* chats.remove(input.chatId), "the operator deleted the chat after the wake's claim")
              if (recreate) {
                const fresh = yield* real.persisted({ chatId: input.chatId, messages: [user("n1", "new life")], context: undefined, agent: mediaEditorDefinition })
                assert.strictEqual(fresh._tag, "Answered")
              }
              const exit = yield* Effect.exit(real.persisted(input))
              wakeAttempts.push(exit)
              return yield* exit
            })
        })
      })).pipe(Layer.provide(TurnComposer.layerNoDeps))
      const { composer, chats, jobs } = yield* buildPipeline(fake, subagents, DeletingComposer)

      const first = yield* composer.persisted({ chatId: storedChatKey(chatId), messages: [user("u1", "research graphs")], context: undefined, agent: mediaEditorDefinition })
      assert.strictEqual(first._tag, "Answered")
      yield* eventually(Effect.sync(() => wakeAttempts.length), (n) => n >= 1, "the wake's attempt")
      const attempt = wakeAttempts[0]!
      assert.isTrue(Exit.isFailure(attempt), "the wake's turn did not go on")
      assert.include(JSON.stringify(attempt), "chat_not_found", "the chat's absence, not a database defect")
      assert.isFalse(fake.calls.some((p) => p.messages.some((m) => subagentResultOf(m) !== undefined)), "no steer was delivered")
      const transcript = yield* Effect.option(chats.transcript(storedChatKey(chatId)))
      if (recreate) {
        const messages = Option.getOrThrow(transcript)
        assert.deepStrictEqual(messages.map((m) => `${m.role}:${m.content}`), ["user:new life", "assistant:you said: new life"])
      } else {
        assert.isTrue(Option.isNone(transcript), "the deleted chat was not brought back")
      }
      assert.deepStrictEqual((yield* jobs.list(storedChatKey(chatId))).jobs, [])
      assert.strictEqual(wakeAttempts.length, 1, "the wake ended there: not retried")
    }).pipe(Effect.scoped)

  it.live("a wake whose chat was deleted after its claim ends on the chat's absence, nothing stored", () => deletedUnderTheWake(false))
  it.live("a wake whose chat was deleted and created again after its claim writes nothing into the new chat", () => deletedUnderTheWake(true))
})
