/**
 * The composition of one persisted turn — the one code path shared by a
 * client's request (`POST /api/agent/chat` with `chatId`) and a server-side
 * wake turn delivering a sub-agent's steer:
 *
 * 1. take the chat's in-flight marker (else `TurnInFlight`, the 409);
 * 2. read the stored transcript; a `guard` may look at it first (a wake defers
 *    behind an unanswered client call, or finds its steer already answered);
 * 3. store the request's messages that are not stored yet (by id), write-ahead;
 * 4. call the provider with the transcript *as the conversation* (the stored
 *    messages, steers and wake answers included, then the new ones), offering
 *    the client tools and the server-executed job tools;
 * 5. execute the job calls of the answer — job record, acknowledgement as the
 *    tool result, both stored in one transaction with the assistant message —
 *    and call the provider again, until an answer without job calls (or with
 *    client calls, which are the client's to execute) or `maxJobRounds`;
 * 6. store the final answer and release the marker (a wake's job settled by
 *    the same statement). An answer larger than a stored message can hold
 *    fails the turn as a provider failure (`TooLarge`), nothing of it stored.
 *
 * A chat the operator deletes while its turn runs stays deleted: each of the
 * turn's writes goes only to a chat that still exists. The first one that
 * finds it gone ends the turn (`ChatGone`) with the answer it was storing —
 * a client still gets its 200, the chat route's contract has no other
 * answer for it — and nothing stored, no job dispatched.
 *
 * Job calls never reach the client: the answer's `toolCalls` are the client
 * calls only. An answer mixing both is stored as it came (one assistant
 * message with every call) followed by the job calls' acks, so the client's
 * continuation (its own copy of the message, deduplicated by id, then its tool
 * results) makes a valid provider conversation.
 */
import type { AgentContext, ChatMessage, ChatResponse, DispatchedJob, ToolCall } from "@switchboard/domain"
import {
  ChatNotFound,
  clientToolSchemas,
  isJobKind,
  jobAcknowledgement,
  jobInputSchemas,
  jobToolSchemas,
  maxStoredValueBytes,
  TurnInFlight
} from "@switchboard/domain"
import { Clock, Config, Context, Duration, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { JobSignals } from "../jobs/JobSignals.ts"
import type { NewJob, Settle } from "../jobs/JobsRepo.ts"
import { JobsRepo } from "../jobs/JobsRepo.ts"
import { ProviderAdapter, ProviderError } from "@switchboard/providers/ProviderAdapter"
import { ChatRepo, inBatches } from "./ChatRepo.ts"
import { fitsStorage, storedBytes } from "../db/StoredSize.ts"
import { buildSystemPrompt } from "./SystemPrompt.ts"
import { traced } from "@switchboard/providers/Spans"

/** Provider calls of one turn when the model keeps dispatching jobs; the last one is offered no job tools. */
export const maxJobRounds = 8

/** What a guard decides, looking at the stored transcript under the marker. */
export type TurnGuard = "proceed" | "defer" | "skip"

export interface TurnInput {
  readonly chatId: string
  /** The request's messages; those already stored (same id) are not stored again. */
  readonly messages: ReadonlyArray<ChatMessage>
  readonly context: AgentContext | undefined
  /** `defer`: nothing is written, the turn is `Deferred`; `skip`: only `settles` is done. */
  readonly guard?: (transcript: ReadonlyArray<ChatMessage>) => TurnGuard
  /**
   * A guarded turn: the transcript as the caller read it just before (a wake's look before it
   * takes the marker). Under the marker the turn then only checks that nothing was stored since,
   * in the statement that takes it, rather than reading the transcript a second time.
   */
  readonly known?: ReadonlyArray<ChatMessage>
  /** The job settled, with its public status, by the statement that stores the turn's last message (a wake's). */
  readonly settles?: Settle
  /**
   * With `known`: the life of the chat the caller looked at (`chats.generation`, a wake's job's
   * chat). The turn is accepted only by that chat, not by one created again under the same id.
   */
  readonly generation?: string
}

/** Set once the turn's own last statement released the marker and made the chat's wakes due. */
interface TurnEnd {
  ended: boolean
}

export type TurnOutcome =
  | { readonly _tag: "Answered"; readonly response: ChatResponse }
  /** The operator deleted the chat during the turn: `response` was not stored (nor its jobs dispatched). */
  | { readonly _tag: "ChatGone"; readonly response: ChatResponse }
  | { readonly _tag: "Deferred" }
  | { readonly _tag: "Skipped" }

const decodeInput = {
  research: Schema.decodeUnknownResult(jobInputSchemas.research),
  demo: Schema.decodeUnknownResult(jobInputSchemas.demo),
  visual: Schema.decodeUnknownResult(jobInputSchemas.visual)
}

/** The messages of `incoming` whose ids `stored` does not have, each id once: what an append stores. */
const unstored = (stored: ReadonlyArray<ChatMessage>, incoming: ReadonlyArray<ChatMessage>): Array<ChatMessage> => {
  const ids = new Set(stored.map((m) => m.id))
  return incoming.filter((m) => {
    if (ids.has(m.id)) return false
    ids.add(m.id)
    return true
  })
}

const respond = (assistant: ChatMessage, clientCalls: ReadonlyArray<ToolCall>, jobs: ReadonlyArray<DispatchedJob>): ChatResponse => ({
  content: assistant.content,
  ...(clientCalls.length > 0 ? { toolCalls: clientCalls } : {}),
  messageId: assistant.id,
  ...(jobs.length > 0 ? { jobs } : {})
})

export class TurnComposer extends Context.Service<TurnComposer, {
  /** A turn without `chatId`: nothing stored, no job tools. */
  unpersisted(
    messages: ReadonlyArray<ChatMessage>,
    context: AgentContext | undefined
  ): Effect.Effect<ChatResponse, ProviderError>
  persisted(input: TurnInput): Effect.Effect<TurnOutcome, TurnInFlight | ChatNotFound | ProviderError>
  /** How long a turn's marker lives: longer than the longest provider call. */
  readonly markerTtl: Duration.Duration
}>()("switchboard/server/chat/TurnComposer") {
  static readonly layerNoDeps = Layer.effect(TurnComposer, Effect.gen(function*() {
    const adapter = yield* ProviderAdapter
    const repo = yield* ChatRepo
    const jobs = yield* JobsRepo
    const signals = yield* JobSignals
    const sql = yield* SqlClient.SqlClient
    // The marker must outlive the longest provider call, or a slow turn could be overtaken.
    // An invalid value is the provider's to report (502 provider_not_configured), not a reason to refuse to start.
    const providerTimeout = yield* Config.Int("LLM_TIMEOUT_MS").pipe(
      Config.withDefault(60_000),
      Effect.orElseSucceed(() => 60_000)
    )
    // The slack beyond the provider call (storing the answer, the job rounds' writes); tests of a killed
    // replica shorten it so that a dead turn's marker expires within the test.
    const grace = yield* Config.Int("TURN_MARKER_GRACE_MS").pipe(
      Config.withDefault(30_000),
      Effect.orElseSucceed(() => 30_000)
    )
    const markerTtl = Duration.millis(providerTimeout + Math.max(0, grace))

    /** The turn outlived its chat (deleted by the operator): nothing of it was stored. */
    const chatGone = (chatId: string) =>
      new ChatNotFound({ error: `Chat "${chatId}" was deleted while this turn ran: nothing of the turn was stored`, chatId })
    const goneWith = (chatId: string, response: ChatResponse) =>
      Effect.logInfo(`chat ${chatId} was deleted during its turn: the answer is not stored`).pipe(
        Effect.as({ _tag: "ChatGone", response } as const)
      )

    const assistantMessage = (content: string, toolCalls: ReadonlyArray<ToolCall>) =>
      Clock.currentTimeMillis.pipe(Effect.map((now): ChatMessage => ({
        id: `msg_${randomUUID()}`,
        role: "assistant",
        content,
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
        timestamp: now
      })))

    const unpersisted = Effect.fnUntraced(function*(
      messages: ReadonlyArray<ChatMessage>,
      context: AgentContext | undefined
    ) {
      const answer = yield* adapter.chat({ messages, systemPrompt: buildSystemPrompt(context), toolSchemas: clientToolSchemas })
      const calls = answer.toolCalls ?? []
      return respond(yield* assistantMessage(answer.content, calls), calls, [])
    }, traced("TurnComposer.unpersisted"))

    /** Each job call: a job record and its ack, or (bad arguments) a tool error the model can correct. */
    const dispatch = (chatId: string, context: AgentContext | undefined, calls: ReadonlyArray<ToolCall>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const created: Array<NewJob> = []
        const acks: Array<ChatMessage> = []
        for (const call of calls) {
          const kind = call.name
          if (!isJobKind(kind)) continue
          const decoded = call.invalidArgs === undefined ? decodeInput[kind](call.args) : undefined
          const id = `msg_${randomUUID()}`
          if (decoded === undefined || decoded._tag === "Failure") {
            const error = `invalid arguments for ${kind}: ${
              decoded === undefined ? call.invalidArgs : decoded.failure.message.replace(/\s*\n\s*/g, " ")
            }`
            acks.push({ id, role: "tool", content: error, toolResult: { toolCallId: call.id, name: kind, error }, timestamp: now })
            continue
          }
          const job: NewJob = { id: `job_${randomUUID()}`, chatId, kind, toolCallId: call.id, input: decoded.success, context }
          const ack = jobAcknowledgement(job)
          created.push(job)
          acks.push({ id, role: "tool", content: ack.message, toolResult: { toolCallId: call.id, name: kind, result: ack }, timestamp: now })
        }
        return { created, acks }
      })

    /**
     * Accepting a turn: taking the chat's marker, reading the transcript, the guard's look, and the
     * write-ahead append of the new messages. It runs uninterruptibly (the acquisition below), so a
     * client that hangs up at any moment either never got the marker or leaves its messages stored
     * and the marker released: the marker is never held without a release that owns it.
     */
    const accept = (input: TurnInput, turnId: string) =>
      Effect.gen(function*() {
        const { chatId, guard } = input
        if (guard === undefined) {
          // A client turn: the marker, the stored transcript and the write-ahead append (ids already
          // stored are left as they were) in one statement (a large request's further batches right
          // after); the conversation is the transcript and then what was new in the request.
          const opened = yield* repo.beginTurnReading(chatId, turnId, markerTtl, input.messages)
          if (opened === undefined) return undefined
          const stored = opened.transcript
          return {
            decision: "proceed" as TurnGuard,
            conversation: [...stored, ...unstored(stored, input.messages)],
            generation: opened.generation
          }
        }
        // A guarded turn (a wake) looks at the transcript before anything is written.
        const guarded = (transcript: ReadonlyArray<ChatMessage>, generation: string | undefined) =>
          Effect.gen(function*() {
            const decision = guard(transcript)
            const fresh = decision !== "proceed" ? [] : unstored(transcript, input.messages)
            if (!(yield* repo.append(chatId, fresh, generation))) return yield* chatGone(chatId)
            return { decision, conversation: [...transcript, ...fresh], generation }
          })
        const known = input.known
        if (known === undefined) {
          const opened = yield* repo.beginTurnReading(chatId, turnId, markerTtl)
          if (opened === undefined) return undefined
          return yield* guarded(opened.transcript, opened.generation).pipe(Effect.onError(() => repo.endTurn(chatId, turnId)))
        }
        // The caller looked already: the guard decides on that look, and the marker, the check that
        // nothing was stored since and the write-ahead append are one statement.
        const decision = guard(known)
        const fresh = decision !== "proceed" ? [] : unstored(known, input.messages)
        const { generation } = input
        const unchanged = yield* repo.beginTurnUnchanged(chatId, turnId, markerTtl, known.length, fresh, generation)
        if (unchanged === undefined) return undefined
        // Deleted since the look (a wake racing the operator): nothing taken, nothing stored.
        if (unchanged === "gone") return yield* chatGone(chatId)
        if (unchanged) return { decision, conversation: [...known, ...fresh], generation }
        // Something was stored since the look (and nothing of this turn's): look again, under the marker.
        return yield* repo.transcript(chatId).pipe(
          Effect.orElseSucceed((): ReadonlyArray<ChatMessage> => []),
          Effect.flatMap((transcript) => guarded(transcript, generation)),
          Effect.onError(() => repo.endTurn(chatId, turnId))
        )
      })

    /** The provider rounds of an accepted turn, job calls executed between them. */
    const rounds = Effect.fnUntraced(function*(
      input: TurnInput,
      turnId: string,
      transcript: ReadonlyArray<ChatMessage>,
      generation: string | undefined,
      end: TurnEnd
    ) {
      const { chatId, context } = input
      const conversation = [...transcript]
      const systemPrompt = buildSystemPrompt(context, { jobs: true })
      const dispatched: Array<DispatchedJob> = []
      let renewed = false
      for (let round = 1;; round++) {
        const jobsOffered = round < maxJobRounds
        // The marker covers one provider call at a time: each further round extends it (a round
        // that dispatched did so in its own statement).
        if (round > 1 && !renewed) yield* repo.renewTurn(chatId, turnId, markerTtl)
        renewed = false
        const answer = yield* adapter.chat({
          messages: conversation,
          systemPrompt,
          toolSchemas: jobsOffered ? [...clientToolSchemas, ...jobToolSchemas] : clientToolSchemas
        })
        const calls = answer.toolCalls ?? []
        const clientCalls = calls.filter((c) => !isJobKind(c.name))
        const jobCalls = jobsOffered ? calls.filter((c) => isJobKind(c.name)) : []
        if (jobCalls.length < calls.length - clientCalls.length) {
          yield* Effect.logWarning(`chat ${chatId}: job calls past the round limit (${maxJobRounds}) were dropped`)
        }
        const assistant = yield* assistantMessage(answer.content, [...jobCalls, ...clientCalls])
        // An answer the transcript could not hold is refused like one the provider could not send.
        if (!fitsStorage(assistant)) {
          return yield* new ProviderError({
            reason: "TooLarge",
            message: `the answer is ${storedBytes(assistant)} bytes of JSON, over the ${maxStoredValueBytes} a stored message holds`
          })
        }
        const { acks, created } = yield* dispatch(chatId, context, jobCalls)
        const last = jobCalls.length === 0 || clientCalls.length > 0
        if (last && created.length === 0 && acks.length === 0) {
          // The common end: the answer stored, a wake's job settled, the marker released and the wakes
          // this turn held back made due, in one statement (the release that follows has nothing left to do).
          const [only, ...more] = inBatches([assistant])
          if (more.length > 0 && !(yield* repo.append(chatId, [assistant], generation))) {
            return yield* goneWith(chatId, respond(assistant, clientCalls, dispatched))
          }
          const ended = yield* jobs.chatTurnEnded(chatId, turnId, more.length > 0 ? undefined : only, input.settles, generation)
          end.ended = true
          if (ended.pending) yield* signals.wake.local
          if (ended.chatGone) return yield* goneWith(chatId, respond(assistant, clientCalls, dispatched))
          return { _tag: "Answered", response: respond(assistant, clientCalls, dispatched) } as const
        }
        const batches = inBatches([assistant, ...acks])
        // A round that dispatched: its calls, their jobs and their acks (no job call is ever stored
        // unanswered) and the marker's renewal for the next call, in one statement. A turn whose
        // marker expired meanwhile writes them all the same, as it always did (below).
        renewed = !last && batches.length === 1 &&
          (yield* jobs.dispatchRound(chatId, turnId, Duration.toMillis(markerTtl), batches[0]!, created))
        if (!renewed) {
          // The calls, their jobs and their acks together: no job call is ever stored unanswered.
          // The chat's row held first: a chat deleted meanwhile gets nothing (no orphan job either).
          const alive = yield* sql.withTransaction(Effect.gen(function*() {
            if (!(yield* repo.holdChat(chatId, generation))) return false
            if (last) {
              yield* jobs.create(created)
              if (created.length > 0) yield* signals.notify("run")
              if (input.settles) yield* jobs.settle(input.settles.jobId, input.settles.status)
              // The chat is free the moment the turn's end is visible (a wake's job settled with it):
              // a client that sees either may go on at once. The release below is then a no-op.
              if (batches.length > 1) yield* repo.append(chatId, [assistant, ...acks], generation)
              yield* repo.endTurn(chatId, turnId, batches.length > 1 ? [] : [assistant, ...acks], generation)
            } else {
              yield* repo.append(chatId, [assistant, ...acks], generation)
              yield* jobs.create(created)
              if (created.length > 0) yield* signals.notify("run")
            }
            return true
          })).pipe(Effect.orDie)
          // This round's jobs were not created: the answer says so by leaving them out.
          if (!alive) return yield* goneWith(chatId, respond(assistant, clientCalls, dispatched))
        }
        if (created.length > 0) yield* signals.run.local
        dispatched.push(...created.map((j) => ({ id: j.id, kind: j.kind, toolCallId: j.toolCallId })))
        if (last) return { _tag: "Answered", response: respond(assistant, clientCalls, dispatched) } as const
        conversation.push(assistant, ...acks)
      }
    }, traced("TurnComposer.rounds"))

    // A client that goes away interrupts the turn (the provider call is aborted, nothing of an answer
    // is stored) and the release frees the chat at once.
    const persisted = Effect.fnUntraced(function*(input: TurnInput) {
      const { chatId } = input
      const turnId = randomUUID()
      const end: TurnEnd = { ended: false }
      return yield* Effect.acquireUseRelease(
        accept(input, turnId),
        (accepted): Effect.Effect<TurnOutcome, TurnInFlight | ChatNotFound | ProviderError> => {
          if (accepted === undefined) {
            return Effect.fail(new TurnInFlight({ error: `A turn for chat "${chatId}" is already in flight`, chatId }))
          }
          switch (accepted.decision) {
            case "defer":
              return Effect.succeed({ _tag: "Deferred" })
            case "skip":
              // The job settled and the marker released in one statement.
              return jobs.chatTurnEnded(chatId, turnId, undefined, input.settles).pipe(
                Effect.flatMap(({ pending }) => {
                  end.ended = true
                  return pending ? signals.wake.local : Effect.void
                }),
                Effect.as({ _tag: "Skipped" } as const)
              )
            case "proceed":
              return rounds(input, turnId, accepted.conversation, accepted.generation, end)
          }
        },
        (accepted) =>
          accepted === undefined || end.ended ? Effect.void : jobs.chatTurnEnded(chatId, turnId).pipe(
            // The marker released; wakes that waited behind this turn are due now (every replica hears of it).
            Effect.flatMap(({ pending }) => pending ? signals.wake.local : Effect.void)
          )
      )
    }, traced("TurnComposer.persisted"))

    return TurnComposer.of({ unpersisted, persisted, markerTtl })
  }))
}
