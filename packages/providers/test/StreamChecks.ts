/**
 * Reading an adapter's `stream` the way the tests need it: every event it
 * emitted (also when it failed), and the port's promise checked on a stream
 * that finished: one `finish`, last; the text deltas adding up to its
 * content; the calls started in order with its ids and names, each delta
 * after its call's start, and the argument deltas adding up to JSON of its
 * arguments (unless the call has `invalidArgs`).
 */
import { assert } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Stream } from "effect"
import type { ProviderChatResponse } from "@switchboard/domain"
import type { ProviderError, ProviderStreamEvent } from "../src/ProviderAdapter.ts"

export interface StreamOutcome {
  readonly events: ReadonlyArray<ProviderStreamEvent>
  readonly exit: Exit.Exit<void, ProviderError>
}

/** Runs the stream to its end, keeping what it emitted before a failure. */
export const runStream = <R>(stream: Stream.Stream<ProviderStreamEvent, ProviderError, R>): Effect.Effect<StreamOutcome, never, R> =>
  Effect.gen(function*() {
    const events: Array<ProviderStreamEvent> = []
    const exit = yield* Stream.runForEach(stream, (event) => Effect.sync(() => void events.push(event))).pipe(Effect.exit)
    return { events, exit }
  })

export const textOf = (events: ReadonlyArray<ProviderStreamEvent>): string =>
  events.flatMap((e) => e.type === "text-delta" ? [e.delta] : []).join("")

export const deltasOf = (events: ReadonlyArray<ProviderStreamEvent>, type: "text-delta" | "tool-call-delta"): number =>
  events.filter((e) => e.type === type).length

/** The failure of a stream that failed, after checking that it emitted no `finish`. */
export const streamFailure = (outcome: StreamOutcome): ProviderError => {
  assert.isFalse(outcome.events.some((e) => e.type === "finish"), "a failed stream emitted a finish")
  if (Exit.isSuccess(outcome.exit)) return assert.fail(`expected the stream to fail, it ended after ${outcome.events.length} events`)
  const error = Cause.findErrorOption(outcome.exit.cause)
  return Option.isSome(error) ? error.value : assert.fail(`expected a ProviderError, got ${Cause.pretty(outcome.exit.cause)}`)
}

/** Checks the port's promise on a finished stream, and gives its `finish` response. */
export const checkFinished = (events: ReadonlyArray<ProviderStreamEvent>): ProviderChatResponse => {
  const finishes = events.filter((e) => e.type === "finish")
  assert.strictEqual(finishes.length, 1, "exactly one finish")
  const last = events.at(-1)
  if (last?.type !== "finish") return assert.fail("the finish comes last")
  const { response } = last
  assert.strictEqual(textOf(events), response.content, "the text deltas add up to the content")
  const starts = events.flatMap((e) => e.type === "tool-call-start" ? [e] : [])
  const calls = response.toolCalls ?? []
  assert.deepStrictEqual(starts.map((s) => [s.id, s.name]), calls.map((c) => [c.id, c.name]), "the calls started are the answer's")
  for (const call of calls) {
    const start = events.findIndex((e) => e.type === "tool-call-start" && e.id === call.id)
    const deltas = events.flatMap((e, i) => e.type === "tool-call-delta" && e.id === call.id ? [{ i, delta: e.delta }] : [])
    assert.isTrue(deltas.every((d) => d.i > start), `the deltas of ${call.id} come after its start`)
    const json = deltas.map((d) => d.delta).join("")
    if (call.invalidArgs === undefined && json !== "") assert.deepStrictEqual(JSON.parse(json), call.args, `the deltas of ${call.id} are its arguments`)
  }
  assert.isTrue(
    events.every((e) => e.type !== "tool-call-delta" || starts.some((s) => s.id === e.id)),
    "no delta for a call that was not started"
  )
  return response
}

/** The response of a stream that must finish: the port's promise checked, a failure failing the test. */
export const finishedResponse = (outcome: StreamOutcome): Effect.Effect<ProviderChatResponse, ProviderError> =>
  Exit.isSuccess(outcome.exit) ? Effect.succeed(checkFinished(outcome.events)) : Effect.failCause(outcome.exit.cause)
