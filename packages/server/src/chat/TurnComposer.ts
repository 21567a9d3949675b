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
 *    the client tools and the server tools (`ServerTools`: the job tools, in
 *    a server with jobs);
 * 5. execute the server tool calls of the answer through the port — their
 *    results (a job's acknowledgement) and their writes (a job's record)
 *    stored in one statement with the assistant message — and call the
 *    provider again, until an answer without server tool calls (or with
 *    client calls, which are the client's to execute) or `maxServerToolRounds`;
 * 6. store the final answer and release the marker, with the server tools'
 *    writes of a turn's end (a wake's job settled by the same statement). An
 *    answer larger than a stored message can hold fails the turn as a
 *    provider failure (`TooLarge`), nothing of it stored.
 *
 * A chat the operator deletes while its turn runs stays deleted: each of the
 * turn's writes goes only to a chat that still exists. The first one that
 * finds it gone ends the turn (`ChatGone`) with the answer it was storing —
 * a client still gets its 200, the chat route's contract has no other
 * answer for it — and nothing stored, no job dispatched.
 *
 * Server tool calls never reach the client: the answer's `toolCalls` are the
 * client calls only. An answer mixing both is stored as it came (one assistant
 * message with every call) followed by the server tools' results, so the
 * client's continuation (its own copy of the message, deduplicated by id, then
 * its tool results) makes a valid provider conversation.
 */
import type { AgentContext, AgentDefinition, ChatMessage, ChatResponse, DispatchedJob, JsonObject, ProviderChatParams, ProviderChatResponse, ProviderUsage, ToolCall, ToolSchema } from "@switchboard/domain"
import { BUILT_IN_AGENT, ChatNotFound, fillSystemPrompt, maxStoredValueBytes, TurnInFlight } from "@switchboard/domain"
import { Cause, Clock, Config, Context, Duration, Effect, Exit, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { ProviderAdapter, ProviderError, pushAnswer, traced } from "@switchboard/providers"
import type { StreamSink } from "@switchboard/providers"
import { ChatRepo, inBatches } from "./ChatRepo.ts"
import { fitsStorage, storedBytes } from "../db/StoredSize.ts"
import { bothWrites, ServerTools } from "./ServerTools.ts"
import type { ServerToolsShape, Settlement, ToolWrites, WrittenRow } from "./ServerTools.ts"
import { buildSystemPrompt } from "./SystemPrompt.ts"
import { mediaEditor } from "../agents/Agents.ts"
import type { LiveTurn } from "./LiveTurn.ts"
import { close, markStarted, publish } from "./LiveTurn.ts"
import { newMessageId } from "./MessageIds.ts"
import { errorText } from "./TurnErrors.ts"
import type { ChatKey } from "./ChatKey.ts"
import { chatIdOf } from "./ChatKey.ts"

/** A client call a stop cut while its input arrived: what its `tool-input-error` says. */
const CALL_CUT_BY_STOP = "The turn was stopped before this call was complete: it is not stored and not to run"

/** Provider calls of one turn when the model keeps calling server tools; the last one is offered none. */
export const maxServerToolRounds = 8

/** What a guard decides, looking at the stored transcript under the marker. */
export type TurnGuard = "proceed" | "defer" | "skip"

export interface TurnInput {
  readonly chatId: ChatKey
  /** The request's messages; those already stored (same id) are not stored again. */
  readonly messages: ReadonlyArray<ChatMessage>
  /** Checked against the agent's context schema by the caller (`checkContext`). */
  readonly context: JsonObject | undefined
  /**
   * The agent the turn runs (default: the built-in). A client turn opens only a chat of this agent
   * (or a new one, then created as its): a chat of another answers `OtherAgent`, nothing written.
   */
  readonly agent?: AgentDefinition
  /** `defer`: nothing is written, the turn is `Deferred`; `skip`: only `settles` is done. */
  readonly guard?: (transcript: ReadonlyArray<ChatMessage>) => TurnGuard
  /**
   * A guarded turn: the transcript as the caller read it just before (a wake's look before it
   * takes the marker). Under the marker the turn then only checks that nothing was stored since,
   * in the statement that takes it, rather than reading the transcript a second time.
   */
  readonly known?: ReadonlyArray<ChatMessage>
  /** Completed by the statement that stores the turn's last message (a wake's job): see `Settlement`. */
  readonly settles?: Settlement
  /**
   * With `known`: the life of the chat the caller looked at (`chats.generation`, a wake's job's
   * chat). The turn is accepted only by that chat, not by one created again under the same id.
   */
  readonly generation?: string
  /**
   * The turn's stream (docs/streaming.md): with one, the provider is called streaming, every chunk
   * is published to it, and a stop asked of it ends the provider call and stores what it produced.
   */
  readonly live?: LiveTurn
}

/** Set once the turn's own last statement released the marker and made the chat's wakes due. */
interface TurnEnd {
  ended: boolean
  /** The provider's usage, summed over the turn's rounds (streamed turns: the `finish` reports it). */
  usage: ProviderUsage | undefined
  /** The turn was stopped: its answer is what the provider produced until then. */
  stopped: boolean
}

/** One provider round's answer, and whether a stop cut it short (then it has no tool calls). */
interface RoundAnswer extends ProviderChatResponse {
  readonly stopped: boolean
}

const addUsage = (total: ProviderUsage | undefined, more: ProviderUsage | undefined): ProviderUsage | undefined =>
  more === undefined ? total : total === undefined ? more : {
    inputTokens: total.inputTokens + more.inputTokens,
    outputTokens: total.outputTokens + more.outputTokens,
    ...(total.cachedInputTokens !== undefined || more.cachedInputTokens !== undefined
      ? { cachedInputTokens: (total.cachedInputTokens ?? 0) + (more.cachedInputTokens ?? 0) }
      : {})
  }

/**
 * A streamed turn's last chunk: `finish` (with the chat, the usage, whether it was stopped) or the
 * `error` the JSON answer would have carried. A turn interrupted (its replica stopping) ends its
 * stream with an error too: its readers learn it ended rather than wait.
 */
const endLive = (live: LiveTurn, exit: Exit.Exit<TurnOutcome | ChatResponse, unknown>, chatId: ChatKey | undefined, end: TurnEnd) => {
  if (Exit.isSuccess(exit)) {
    const outcome = exit.value
    // Another agent's chat: nothing ran yet, and the caller runs the turn again as that agent's, on
    // this same stream (`ChatTurns`); whoever holds the stream closes it at the end (`TurnStreams`).
    if ("_tag" in outcome && outcome._tag === "OtherAgent") return
    // A turn that did not run (a deferred or skipped wake) has no stream of its own.
    if ("_tag" in outcome && outcome._tag !== "Answered" && outcome._tag !== "ChatGone") return close(live)
    return publish(live, {
      type: "finish",
      ...(end.stopped ? { finishReason: "other" as const } : {}),
      messageMetadata: {
        ...(chatId === undefined ? {} : { chatId: chatIdOf(chatId) }),
        ...(end.usage === undefined ? {} : { usage: { inputTokens: end.usage.inputTokens, outputTokens: end.usage.outputTokens } }),
        ...(end.stopped ? { stopped: true } : {})
      }
    })
  }
  publish(live, { type: "error", errorText: errorText(exit.cause) })
}

/** A server tool round, as the stream shows it: each call with its result (a job's acknowledgement). */
const publishExecuted = (live: LiveTurn, calls: ReadonlyArray<ToolCall>, results: ReadonlyArray<ChatMessage>) => {
  for (const call of calls) {
    const result = results.find((m) => m.toolResult?.toolCallId === call.id)?.toolResult
    publish(live, { type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.args })
    publish(live, {
      type: "tool-output-available",
      toolCallId: call.id,
      output: result === undefined ? null : result.error !== undefined ? { error: result.error } : result.result ?? null
    })
  }
  publish(live, { type: "finish-step" })
}

/**
 * Runs a round's provider call until it ends or the turn is stopped, which interrupts it (and so
 * closes the provider's connection): the call in a fiber of its own, which the stop interrupts
 * directly — no watcher fiber, no stage in the stream (measured with `npm run bench`).
 */
const untilStopped = <A, E>(round: Effect.Effect<A, E>, live: LiveTurn) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(round, { startImmediately: true })
    const interrupt = () => fiber.interruptUnsafe()
    live.onStop.add(interrupt)
    if (live.stopped) interrupt()
    const exit = yield* Fiber.await(fiber)
    live.onStop.delete(interrupt)
    return exit
  })

/**
 * Publishes a streamed provider call's output as UI chunks while it arrives: text, and the client's
 * tool calls with their argument deltas (a server tool's call is shown once executed, with its
 * acknowledgement). A stop ends the call (its connection closed) with the text so far and no calls.
 * A round whose text outgrows a stored message fails as `TooLarge` at once, not at its end.
 */
const streamRound = (
  adapter: ProviderAdapter["Service"],
  live: LiveTurn,
  params: ProviderChatParams,
  owns: (name: string) => boolean,
  round: number
): Effect.Effect<RoundAnswer, ProviderError> =>
  Effect.gen(function*() {
    publish(live, { type: "start-step" })
    const textId = `${live.messageId}_text_${round}`
    let text = ""
    /** The text's UTF-8 bytes: a stored message is bounded in bytes, and a character may take up to four. */
    let textBytes = 0
    let first = true
    /** The client's calls whose input is streaming, by id: their names. */
    const clientCalls = new Map<string, string>()
    // Called in the network read that brought the pieces (docs/performance.md): no fiber per delta.
    const sink: StreamSink = (deltas) => {
      if (first) {
        first = false
        markStarted(live)
      }
      for (const delta of deltas) {
        switch (delta.type) {
          case "text-delta":
            if (text === "") publish(live, { type: "text-start", id: textId })
            text += delta.delta
            textBytes += Buffer.byteLength(delta.delta, "utf8")
            // Only a stored answer is bounded so (without a chat nothing is stored).
            if (live.chatId !== undefined && textBytes > maxStoredValueBytes) {
              return new ProviderError({ reason: "TooLarge", message: `the answer outgrew the ${maxStoredValueBytes} bytes a stored message holds` })
            }
            publish(live, { type: "text-delta", id: textId, delta: delta.delta })
            break
          case "tool-call-start":
            if (!owns(delta.name)) {
              clientCalls.set(delta.id, delta.name)
              publish(live, { type: "tool-input-start", toolCallId: delta.id, toolName: delta.name })
            }
            break
          case "tool-call-delta":
            if (clientCalls.has(delta.id)) publish(live, { type: "tool-input-delta", toolCallId: delta.id, inputTextDelta: delta.delta })
            break
        }
      }
      return undefined
    }
    const call = live.providerStreams ? adapter.streamTo(params, sink) : pushAnswer(adapter.chat(params), sink)
    const exit = yield* untilStopped(call, live)
    // Interrupted by `stop`: what was read is the answer. Any other failure is the round's.
    if (Exit.isFailure(exit) && !(Cause.hasInterruptsOnly(exit.cause) && live.stopped)) {
      return yield* Effect.failCause(exit.cause)
    }
    // An answer with no piece at all (empty, no calls) starts the stream at its end.
    markStarted(live)
    const response = Exit.isSuccess(exit) ? exit.value : undefined
    if (text !== "") publish(live, { type: "text-end", id: textId })
    if (response === undefined) {
      // Stopped: the answer stored is the text, without calls; a call whose input had begun says so.
      for (const [toolCallId, toolName] of clientCalls) {
        publish(live, { type: "tool-input-error", toolCallId, toolName, input: {}, errorText: CALL_CUT_BY_STOP })
      }
      return { content: text, stopped: true }
    }
    for (const call of response.toolCalls ?? []) {
      if (!owns(call.name)) publish(live, { type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.args })
    }
    return { ...response, stopped: false }
  })

export type TurnOutcome =
  | { readonly _tag: "Answered"; readonly response: ChatResponse }
  /** The operator deleted the chat during the turn: `response` was not stored (nor its jobs dispatched). */
  | { readonly _tag: "ChatGone"; readonly response: ChatResponse }
  | { readonly _tag: "Deferred" }
  | { readonly _tag: "Skipped" }
  /** A client turn found its chat another agent's (`agent`): nothing was taken or stored. */
  | { readonly _tag: "OtherAgent"; readonly agent: string }

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

/** What a turn of `agent` offers the provider, and says of it. */
interface Offer {
  readonly clientTools: ReadonlyArray<ToolSchema>
  /** The server tools offered (`ServerTools`' schemas the agent may use). */
  readonly serverTools: ReadonlyArray<ToolSchema>
  /** Whether a call is to an offered server tool (else it is the client's to execute). */
  readonly owns: (name: string) => boolean
  readonly systemPrompt: string
  readonly model: string | undefined
}

/**
 * The built-in agent offers every server tool the port has, its prompt `buildSystemPrompt` as it
 * always was; another agent offers the server tools of its `jobKinds` (a call to any other is the
 * client's, as an unknown tool's would be), its prompt its template filled from the context, with
 * what the port says of the offered tools appended only when some are.
 */
const offerOf = (
  agent: AgentDefinition,
  context: JsonObject | undefined,
  tools: ServerToolsShape | undefined
): Offer => {
  const model = agent.model
  if (agent.name === BUILT_IN_AGENT) {
    const agentContext = context as AgentContext | undefined
    return {
      clientTools: agent.tools,
      serverTools: tools?.schemas ?? [],
      owns: tools === undefined ? () => false : tools.owns,
      systemPrompt: tools === undefined
        ? buildSystemPrompt(agentContext)
        : buildSystemPrompt(agentContext, { serverTools: tools.instructions }),
      model
    }
  }
  const kinds = new Set<string>(agent.jobKinds)
  const serverTools = (tools?.schemas ?? []).filter((schema) => kinds.has(schema.name))
  const names = serverTools.map((schema) => schema.name)
  const offered = new Set(names)
  const instructions = serverTools.length === 0 || tools === undefined
    ? undefined
    : tools.instructionsFor?.(names) ?? tools.instructions
  const filled = fillSystemPrompt(agent.systemPrompt, context)
  return {
    clientTools: agent.tools,
    serverTools,
    owns: (name) => offered.has(name),
    systemPrompt: instructions === undefined ? filled : `${filled}\n\n${instructions}`,
    model
  }
}

export class TurnComposer extends Context.Service<TurnComposer, {
  /** A turn without `chatId`: nothing stored, no server tools. */
  unpersisted(
    messages: ReadonlyArray<ChatMessage>,
    context: JsonObject | undefined,
    agent?: AgentDefinition,
    live?: LiveTurn
  ): Effect.Effect<ChatResponse, ProviderError>
  persisted(input: TurnInput): Effect.Effect<TurnOutcome, TurnInFlight | ChatNotFound | ProviderError>
  /** How long a turn's marker lives: longer than the longest provider call. */
  readonly markerTtl: Duration.Duration
}>()("switchboard/server/chat/TurnComposer") {
  static readonly layerNoDeps = Layer.effect(TurnComposer, Effect.gen(function*() {
    const adapter = yield* ProviderAdapter
    const repo = yield* ChatRepo
    const tools = yield* ServerTools
    const sql = yield* SqlClient.SqlClient
    // The marker must outlive the longest provider call, or a slow turn could be overtaken.
    // An invalid value is the provider's to report (502 provider_not_configured), not a reason to refuse to start.
    const providerTimeout = yield* Config.Int("LLM_TIMEOUT_MS").pipe(
      Config.withDefault(60_000),
      Effect.orElseSucceed(() => 60_000)
    )
    // The slack beyond the provider call (storing the answer, the tool rounds' writes); tests of a killed
    // replica shorten it so that a dead turn's marker expires within the test.
    const grace = yield* Config.Int("TURN_MARKER_GRACE_MS").pipe(
      Config.withDefault(30_000),
      Effect.orElseSucceed(() => 30_000)
    )
    const markerTtl = Duration.millis(providerTimeout + Math.max(0, grace))

    /** The turn outlived its chat (deleted by the operator): nothing of it was stored. */
    const chatGone = (chatId: ChatKey) =>
      new ChatNotFound({ error: `Chat "${chatIdOf(chatId)}" was deleted while this turn ran: nothing of the turn was stored`, chatId: chatIdOf(chatId) })
    const goneWith = (chatId: ChatKey, response: ChatResponse) =>
      Effect.logInfo(`chat ${chatId} was deleted during its turn: the answer is not stored`).pipe(
        Effect.as({ _tag: "ChatGone", response } as const)
      )

    const assistantMessage = (
      content: string,
      toolCalls: ReadonlyArray<ToolCall>,
      options: { readonly id?: string; readonly metadata?: JsonObject } = {}
    ) =>
      Clock.currentTimeMillis.pipe(Effect.map((now): ChatMessage => ({
        id: options.id ?? newMessageId(),
        role: "assistant",
        content,
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
        ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
        timestamp: now
      })))

    const unpersisted = Effect.fnUntraced(function*(
      messages: ReadonlyArray<ChatMessage>,
      context: JsonObject | undefined,
      agent: AgentDefinition = mediaEditor,
      live?: LiveTurn
    ) {
      const offer = offerOf(agent, context, undefined)
      const params: ProviderChatParams = {
        messages,
        systemPrompt: offer.systemPrompt,
        toolSchemas: offer.clientTools,
        ...(offer.model === undefined ? {} : { model: offer.model })
      }
      if (live === undefined) {
        const answer = yield* adapter.chat(params)
        const calls = answer.toolCalls ?? []
        return respond(yield* assistantMessage(answer.content, calls), calls, [])
      }
      const end: TurnEnd = { ended: false, usage: undefined, stopped: false }
      return yield* Effect.gen(function*() {
        publish(live, { type: "start", messageId: live.announcedId })
        const answer = yield* streamRound(adapter, live, params, () => false, 1)
        publish(live, { type: "finish-step" })
        end.usage = answer.usage
        end.stopped = answer.stopped
        const calls = answer.toolCalls ?? []
        return respond(yield* assistantMessage(answer.content, calls, { id: live.messageId }), calls, [])
      }).pipe(Effect.onExit((exit) => Effect.sync(() => endLive(live, exit, undefined, end))))
    }, traced("TurnComposer.unpersisted"))

    /** A turn's end written: the tools' `after` (the statement committed), the release then needing nothing. */
    const ended = (end: TurnEnd, writes: ToolWrites, row: WrittenRow | undefined) => {
      end.ended = true
      return writes.after(row)
    }

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
          const opened = yield* repo.beginAgentTurn(chatId, turnId, markerTtl, input.messages, (input.agent ?? mediaEditor).name)
          if (opened._tag === "Held") return undefined
          if (opened._tag === "OtherAgent") return { otherAgent: opened.agent }
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

    /** The provider rounds of an accepted turn, server tool calls executed between them. */
    const rounds = Effect.fnUntraced(function*(
      input: TurnInput,
      turnId: string,
      transcript: ReadonlyArray<ChatMessage>,
      generation: string | undefined,
      end: TurnEnd
    ) {
      const { chatId, context, live } = input
      const conversation = [...transcript]
      const offer = offerOf(input.agent ?? mediaEditor, context, tools)
      const { systemPrompt, owns } = offer
      const model = offer.model === undefined ? {} : { model: offer.model }
      const dispatched: Array<DispatchedJob> = []
      const turnEnd = tools.turnEnded(chatId, input.settles)
      if (live !== undefined) publish(live, { type: "start", messageId: live.announcedId })
      let renewed = false
      for (let round = 1;; round++) {
        const toolsOffered = round < maxServerToolRounds
        // The marker covers one provider call at a time: each further round extends it (a round
        // that executed server tools did so in its own statement).
        if (round > 1 && !renewed) yield* repo.renewTurn(chatId, turnId, markerTtl)
        renewed = false
        const params: ProviderChatParams = {
          messages: conversation,
          systemPrompt,
          toolSchemas: toolsOffered && offer.serverTools.length > 0 ? [...offer.clientTools, ...offer.serverTools] : offer.clientTools,
          ...model
        }
        const answer: RoundAnswer = live === undefined
          ? { ...(yield* adapter.chat(params)), stopped: false }
          : yield* streamRound(adapter, live, params, owns, round)
        end.usage = addUsage(end.usage, answer.usage)
        end.stopped = answer.stopped
        const calls = answer.toolCalls ?? []
        const clientCalls = calls.filter((c) => !owns(c.name))
        const serverCalls = toolsOffered ? calls.filter((c) => owns(c.name)) : []
        if (serverCalls.length < calls.length - clientCalls.length) {
          yield* Effect.logWarning(`chat ${chatId}: server tool calls past the round limit (${maxServerToolRounds}) were dropped`)
        }
        const assistant = yield* assistantMessage(answer.content, [...serverCalls, ...clientCalls], {
          // The stream announced the turn's first message under this id.
          ...(round === 1 && live !== undefined ? { id: live.messageId } : {}),
          ...(answer.stopped ? { metadata: { stopped: true } } : {})
        })
        // An answer the transcript could not hold is refused like one the provider could not send.
        if (!fitsStorage(assistant)) {
          return yield* new ProviderError({
            reason: "TooLarge",
            message: `the answer is ${storedBytes(assistant)} bytes of JSON, over the ${maxStoredValueBytes} a stored message holds`
          })
        }
        if (serverCalls.length === 0) {
          if (live !== undefined) publish(live, { type: "finish-step" })
          // The common end: the answer stored, the tools' end writes (a wake's job settled), the marker
          // released, in one statement (the release that follows has nothing left to do).
          const [only, ...more] = inBatches([assistant])
          if (more.length > 0 && !(yield* repo.append(chatId, [assistant], generation))) {
            return yield* goneWith(chatId, respond(assistant, clientCalls, dispatched))
          }
          const closed = yield* repo.turnEnded(chatId, turnId, turnEnd, more.length > 0 ? undefined : only, generation)
          yield* ended(end, turnEnd, closed.row)
          if (closed.chatGone) return yield* goneWith(chatId, respond(assistant, clientCalls, dispatched))
          return { _tag: "Answered", response: respond(assistant, clientCalls, dispatched) } as const
        }
        const executed = yield* tools.execute({ chatId, context }, serverCalls)
        const results = executed.results
        if (live !== undefined) publishExecuted(live, serverCalls, results)
        const last = clientCalls.length > 0
        const batches = inBatches([assistant, ...results])
        // A round that executed server tools: its calls, their results (no server tool call is ever
        // stored unanswered), the tools' writes and the marker's renewal for the next call, in one
        // statement. A turn whose marker expired meanwhile writes them all the same, as it always did (below).
        const inOne = !last && batches.length === 1
          ? yield* repo.toolRound(chatId, turnId, markerTtl, batches[0]!, executed.writes)
          : undefined
        renewed = inOne !== undefined
        if (inOne !== undefined) {
          yield* executed.writes.after(inOne.row)
        } else {
          // The calls, their results and the tools' writes together. The chat's row held first: a chat
          // deleted meanwhile gets nothing (no orphan job either).
          const writes = last ? bothWrites(executed.writes, turnEnd) : executed.writes
          const written = yield* sql.withTransaction(Effect.gen(function*() {
            if (!(yield* repo.holdChat(chatId, generation))) return undefined
            if (last) {
              const row = yield* repo.writeTools(writes)
              // The chat is free the moment the turn's end is visible (a wake's job settled with it):
              // a client that sees either may go on at once. The release below is then a no-op.
              if (batches.length > 1) yield* repo.append(chatId, [assistant, ...results], generation)
              yield* repo.endTurn(chatId, turnId, batches.length > 1 ? [] : [assistant, ...results], generation)
              return row
            }
            yield* repo.append(chatId, [assistant, ...results], generation)
            return yield* repo.writeTools(writes)
          })).pipe(Effect.orDie)
          // This round's jobs were not created: the answer says so by leaving them out.
          if (written === undefined) return yield* goneWith(chatId, respond(assistant, clientCalls, dispatched))
          if (last) yield* ended(end, writes, written)
          else yield* writes.after(written)
        }
        dispatched.push(...executed.dispatched)
        if (last) return { _tag: "Answered", response: respond(assistant, clientCalls, dispatched) } as const
        conversation.push(assistant, ...results)
      }
    }, traced("TurnComposer.rounds"))

    // A client that goes away interrupts the turn (the provider call is aborted, nothing of an answer
    // is stored) and the release frees the chat at once.
    const persisted = Effect.fnUntraced(function*(input: TurnInput) {
      const { chatId, live } = input
      const turnId = randomUUID()
      const end: TurnEnd = { ended: false, usage: undefined, stopped: false }
      const turn = Effect.acquireUseRelease(
        accept(input, turnId).pipe(Effect.tap((accepted) =>
          Effect.sync(() => {
            if (live !== undefined && accepted !== undefined && !("otherAgent" in accepted)) live.turnId = turnId
          })
        )),
        (accepted): Effect.Effect<TurnOutcome, TurnInFlight | ChatNotFound | ProviderError> => {
          if (accepted === undefined) {
            return Effect.fail(new TurnInFlight({ error: `A turn for chat "${chatIdOf(chatId)}" is already in flight`, chatId: chatIdOf(chatId) }))
          }
          if ("otherAgent" in accepted) return Effect.succeed({ _tag: "OtherAgent", agent: accepted.otherAgent })
          switch (accepted.decision) {
            case "defer":
              return Effect.succeed({ _tag: "Deferred" })
            case "skip": {
              // The tools' end writes (a wake's job settled) and the marker released in one statement.
              const turnEnd = tools.turnEnded(chatId, input.settles)
              return repo.turnEnded(chatId, turnId, turnEnd).pipe(
                Effect.flatMap(({ row }) => ended(end, turnEnd, row)),
                Effect.as({ _tag: "Skipped" } as const)
              )
            }
            case "proceed":
              return rounds(input, turnId, accepted.conversation, accepted.generation, end)
          }
        },
        (accepted) => {
          if (accepted === undefined || "otherAgent" in accepted || end.ended) return Effect.void
          // The marker released, with the tools' end writes (wakes that waited behind this turn due now).
          const turnEnd = tools.turnEnded(chatId, undefined)
          return repo.turnEnded(chatId, turnId, turnEnd).pipe(Effect.flatMap(({ row }) => turnEnd.after(row)))
        }
      )
      if (live === undefined) return yield* turn
      // The stream's last chunk once the turn's end is stored (or nothing was): readers that see
      // `finish` find the answer in the transcript.
      return yield* turn.pipe(Effect.onExit((exit) => Effect.sync(() => endLive(live, exit, chatId, end))))
    }, traced("TurnComposer.persisted"))

    return TurnComposer.of({ unpersisted, persisted, markerTtl })
  }))
}
