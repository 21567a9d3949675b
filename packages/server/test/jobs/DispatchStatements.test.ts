/**
 * The round trips of a turn that dispatches a job, counted statement by
 * statement: the job tools add none of their own. The turn is three
 * statements — its opening (marker, transcript, write-ahead), the
 * dispatching round (the calls' acks, the job, the marker's renewal) and its
 * end (the answer, the marker's release, the chat's waiting wakes) — the
 * jobs' SQL riding in chat's statements as fragments (chat/ServerTools.ts).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Statement } from "effect/sql"
import { ChatRepo } from "../../src/chat/ChatRepo.ts"
import { TurnComposer } from "../../src/chat/turn/TurnComposer.ts"
import { JobSignals } from "../../src/jobs/JobSignals.ts"
import { JobsRepo } from "../../src/jobs/JobsRepo.ts"
import * as JobTools from "../../src/jobs/JobTools.ts"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { teacher, user } from "../support/JobsHelpers.ts"
import { backend, TestDatabase } from "../support/TestDatabase.ts"
import { storedChatKey } from "../../src/users/ChatKey.ts"
import { mediaEditorDefinition } from "../../src/agents/MediaEditor.ts"

const fake = makeFakeProvider()

/** What each statement run under `effect` was, by the first words of its SQL. */
const statementsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const seen: Array<string> = []
    const result = yield* effect.pipe(
      Effect.provideService(Statement.CurrentTransformer, (self) =>
        Effect.sync(() => {
          seen.push(self.compile()[0].replace(/\s+/g, " ").trim().slice(0, 60))
          return self
        }))
    )
    return { result, seen }
  })

describe(`a dispatching turn's statements on ${backend} PostgreSQL`, () => {
  const services = TurnComposer.layerNoDeps.pipe(
    Layer.provide(JobTools.layerNoDeps),
    Layer.provideMerge(JobSignals.layer),
    Layer.provideMerge(Layer.mergeAll(ChatRepo.layer, JobsRepo.layer)),
    Layer.provideMerge(fake.layer),
    Layer.provideMerge(TestDatabase)
  )
  layer(services, { excludeTestServices: true })("with the job tools", (it) => {
    it.effect("one statement opens the turn, one is the dispatching round, one ends it", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        const composer = yield* TurnComposer
        const { result, seen } = yield* statementsOf(
          composer.persisted({ chatId: storedChatKey("statements-1"), messages: [user("u1", "research graph layouts")], context: undefined, agent: mediaEditorDefinition })
        )
        assert.strictEqual(result._tag, "Answered")
        assert.strictEqual(result._tag === "Answered" ? result.response.jobs?.length : 0, 1)
        assert.strictEqual(seen.length, 3, seen.join("\n"))
        // The dispatching round: the marker renewed, the acks appended and the job recorded together.
        assert.match(seen[1]!, /^WITH marker AS \( UPDATE chat_turns/)
        const { jobs } = yield* (yield* JobsRepo).list(storedChatKey("statements-1"))
        assert.deepStrictEqual(jobs.map((j) => j.kind), ["research"])
      }))
  })
})
