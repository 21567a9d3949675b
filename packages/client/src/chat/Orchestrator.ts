/**
 * The orchestrator (docs/chat.md, the orchestrator): drives one
 * user turn through the multi-step tool-call loop (the one step loop,
 * `runSteps`: every call of an answer is this client's to run).
 *
 *   checking   → once per orchestrator, when it names an agent: the agent's
 *                client tools against the registry (`AgentToolsMissing`)
 *   sending    → POST { messages, context, chatId, agent } through `ChatTransport`
 *   responding → the answer's text streams in (or, not streamed, the answer is final)
 *   processing → the answer asked for tools: validate, execute (`activeTool`), append results
 *   (loop)     → send the grown history back
 *   idle       → done;  error → the API or network failed
 *
 * Answers stream by default (`streaming: false` waits for each one whole):
 * the assistant message appears in `chatStore` at the stream's `start`, under
 * the id the server stores it under, grows with each text delta (`onDelta`
 * hears each), and is replaced by the final message once the stream ends.
 * The stream only changes how one answer arrives: its chunks are folded into
 * the same `ChatResponse` (`TurnChunks`) before any tool runs, and the loop,
 * the validation and the cap are the same for both.
 *
 * Stopping: `stop` asks the server to stop the turn (`POST
 * /api/chats/{chatId}/stop`; its stream then ends with a `finish` marked
 * `stopped`, the partial answer stored) and the loop to end: no further tool
 * runs (a call left is answered with an error saying so, so the history stays
 * valid) and nothing more is sent. A turn the server reports stopped ends the
 * same way. Interrupting `run` (Ctrl+C, a `run()` signal) stops the server's
 * turn too, and keeps the text that arrived as a stopped message.
 *
 * Two kinds of failure, handled differently on purpose: a tool that fails (or
 * throws, or gets invalid arguments) is the model's problem — its error goes
 * into a `ToolResult` and the loop continues so the model can recover; a
 * failed API call is the user's problem — the turn stops with `chatStore.error`
 * set (and `chatStore.failure`: its code, and `retryAfter` for a replica that
 * is busy, 503 `overloaded`) and status `error`. The loop is capped at `maxIterations` provider calls.
 *
 * Every message appended to `chatStore` is also appended to the history sent
 * on the next iteration; assistant messages reuse the server's `messageId`, so
 * the transcript the server persists under `chatId` has no duplicates.
 */
import type { ChatMessage, ChatRequest, ChatResponse, DispatchedJob, ToolCall, ToolResult, UiChunk } from "@switchboard/domain"
import { runSteps, toolMessageContent, traced } from "@switchboard/domain"
import { Cause, Clock, Effect, Stream } from "effect"
import type { NewChatMessage } from "../stores/ChatStore.ts"
import { newMessageId } from "../stores/Ids.ts"
import { agentToolsMissing } from "./AgentToolsMissing.ts"
import { ChatTransport, ChatTransportError } from "./ChatTransport.ts"
import type { Orchestrator, OrchestratorDeps, RunResult, TurnContext } from "./OrchestratorApi.ts"
import { iterationLimitMessage, maxIterations, notRunWhenStopped, turnFailure } from "./OrchestratorApi.ts"
import { resolveCall, stripNul } from "./ResolveCall.ts"
import { emptyProgress, foldChunk, responseOf } from "./TurnChunks.ts"
import { askingFor, clientCallsWaiting, makeDecide } from "./ApprovalDecisions.ts"
import { showServerCall } from "./ServerCalls.ts"

export * from "./OrchestratorApi.ts"

/** A running turn, as `stop` and the request in flight see it. */
interface TurnState {
  readonly chatId: string
  /** A request is in flight. */
  inFlight: boolean
  /** Its stream has started (`start`): the server has the turn, so it can stop it. */
  started: boolean
  stopRequested: boolean
  /** The server was asked to stop the turn (at most once per turn). */
  stopSent: boolean
  /** The server ran tools of its own during the turn (an MCP server's): the turn's end re-syncs. */
  serverRan: boolean
}

/** An answer, and whether the server stopped the turn that gave it. */
interface Answer {
  readonly response: ChatResponse
  readonly stopped: boolean
}


/** The server's id keeps the persisted transcript and ours aligned; an empty one would fail validation. */
const serverId = (response: ChatResponse): { readonly id?: string } => response.messageId !== "" ? { id: response.messageId } : {}

/**
 * The loop's spans (`traced`: only when a tracer records them — with tracing off, `run()` turns it
 * off, a no-op span still copies the fiber's context twice, on every tool call) without a stack
 * trace: an `Error` per span, twice.
 */
const noStackTrace = { captureStackTrace: false } as const

export const makeOrchestrator = (deps: OrchestratorDeps): Orchestrator => {
  const { agent: agentName, agentStore, chatStore, onDelta, registry } = deps
  const streaming = deps.streaming ?? true
  const chat = () => chatStore.getState()
  const agent = () => agentStore.getState()
  const named = agentName === undefined ? {} : { agent: agentName }
  let current: TurnState | undefined

  // Once per orchestrator: a passed check is kept; a failed one (a missing tool, the server down)
  // is asked again on the next turn, since the registry or the agent may have changed meanwhile.
  let agentChecked = agentName === undefined
  const checkAgent: Orchestrator["checkAgent"] = Effect.suspend(() =>
    agentChecked || agentName === undefined ? Effect.void : Effect.gen(function*() {
      const transport = yield* ChatTransport
      const info = yield* transport.agent(agentName)
      const missing = agentToolsMissing(info, registry.getAll().map((tool) => tool.name))
      if (missing !== undefined) return yield* missing
      agentChecked = true
    })
  )

  /** Validate, then execute; never fails: every outcome is a ToolResult. */
  const resolveToolCall = (call: ToolCall, context: TurnContext | null) =>
    resolveCall(registry, call, context).pipe(traced("Orchestrator.resolveToolCall", () => ({ ...noStackTrace, attributes: { tool: call.name } })))

  /** The server stops the turn; once, and whatever it answers (a turn that already ended is no failure). */
  const stopOnServer = (turn: TurnState): Effect.Effect<void, never, ChatTransport> =>
    Effect.suspend(() => {
      if (turn.stopSent) return Effect.void
      turn.stopSent = true
      return ChatTransport.use((transport) => transport.stop(turn.chatId)).pipe(Effect.timeout("5 seconds"), Effect.ignore)
    })

  const stop: Orchestrator["stop"] = Effect.suspend(() => {
    const turn = current
    if (turn === undefined) return Effect.void
    turn.stopRequested = true
    // A stream that has not started yet is stopped at its `start` (asked earlier, the server may not have the turn yet).
    return turn.inFlight && (turn.started || !streaming) ? stopOnServer(turn) : Effect.void
  })

  const run: Orchestrator["run"] = (messages, context) =>
    Effect.suspend(() => {
      const turn: TurnState = { chatId: chat().chatId, inFlight: false, started: false, stopRequested: false, stopSent: false, serverRan: false }
      current = turn
      return runTurn(turn, messages, context).pipe(Effect.ensuring(Effect.sync(() => {
        if (current === turn) current = undefined
      })))
    })

  // The loop runs once per user turn and every step is on the app's hot path (CPU per step):
  // the stores are plain synchronous setters, so the generator calls them directly instead of
  // wrapping each in an `Effect.sync`.
  const runTurn = (turn: TurnState, messages: ReadonlyArray<ChatMessage> | undefined, context: TurnContext | null | undefined) =>
    Effect.gen(function*() {
      const transport = yield* ChatTransport
      const clock = yield* Clock.Clock
      const history: Array<ChatMessage> = [...(messages ?? chat().messages)]
      const agentContext = context === undefined ? agent().context : context
      const chatId = turn.chatId

      const append = (message: NewChatMessage): ChatMessage => {
        const timestamp = message.timestamp ?? clock.currentTimeMillisUnsafe()
        const stored = chat().addMessage({ ...message, timestamp })
        history.push(stored)
        return stored
      }
      /** The answer's message: in the place of the one that streamed in, if one did, else appended. */
      const settle = (message: NewChatMessage): ChatMessage => {
        const draftId = chat().streamingId
        if (draftId === null) return append(message)
        const draft = chat().messages.findLast((m) => m.id === draftId)
        const stored: ChatMessage = {
          ...message,
          id: message.id ?? newMessageId(),
          timestamp: message.timestamp ?? draft?.timestamp ?? clock.currentTimeMillisUnsafe()
        }
        chat().finishStreaming(stored)
        history.push(stored)
        return stored
      }

      /** The answer streamed: the message grows in `chatStore` as the chunks arrive, folded into the answer. */
      const streamed = (request: ChatRequest): Effect.Effect<Answer, ChatTransportError> => {
        let progress = emptyProgress
        let draftId: string | undefined
        let shown = ""
        const startDraft = (messageId: string) => {
          const draft = chat().startStreaming({
            ...(messageId === "" ? {} : { id: messageId }),
            role: "assistant",
            content: "",
            timestamp: clock.currentTimeMillisUnsafe()
          })
          draftId = draft.id
          return draft.id
        }
        const onChunk = (chunk: UiChunk): Effect.Effect<void, never, ChatTransport> => {
          progress = foldChunk(progress, chunk)
          if (chunk.type === "start") {
            if (draftId === undefined) startDraft(chunk.messageId)
            turn.started = true
            if (turn.stopRequested) return Effect.asVoid(Effect.forkChild(stopOnServer(turn)))
          } else if (chunk.type === "text-delta" && chunk.delta !== "") {
            const id = draftId ?? startDraft("")
            shown += stripNul(chunk.delta)
            if (agent().status !== "responding") agent().setStatus("responding")
            chat().setStreamingContent(shown)
            onDelta?.(chunk.delta, id)
          } else if (draftId !== undefined && showServerCall(chunk, progress, shown, { chat: chatStore, agent: agentStore })) {
            turn.serverRan = true
          }
          return Effect.void
        }
        return Stream.runForEach(transport.stream(request), onChunk).pipe(
          Effect.flatMap((): Effect.Effect<Answer, ChatTransportError> => {
            if (progress.error !== undefined) return Effect.fail(new ChatTransportError({ message: progress.error }))
            if (!progress.finished) {
              return Effect.fail(new ChatTransportError({ message: "the answer's stream ended before the turn finished" }))
            }
            return Effect.succeed({ response: responseOf(progress), stopped: progress.stopped })
          }),
          Effect.onError((cause) =>
            Effect.sync(() => {
              if (draftId === undefined || chat().streamingId !== draftId) return
              // Interrupted, the text that arrived stays, marked as stopped (the server stores the same); failed, it goes.
              const draft = chat().messages.findLast((m) => m.id === draftId)
              chat().finishStreaming(
                Cause.hasInterruptsOnly(cause) && draft !== undefined && draft.content !== ""
                  ? { ...draft, metadata: { ...draft.metadata, stopped: true } }
                  : null
              )
            })
          ),
          Effect.provideService(ChatTransport, transport)
        )
      }

      /** One request of the loop; interrupted, it stops the server's turn too. */
      const ask = (request: ChatRequest): Effect.Effect<Answer, ChatTransportError> =>
        Effect.suspend(() => {
          turn.inFlight = true
          return streaming
            ? streamed(request)
            : Effect.map(transport.send(request), (response): Answer => ({ response, stopped: false }))
        }).pipe(
          Effect.onInterrupt(() => stopOnServer(turn)),
          Effect.ensuring(Effect.sync(() => {
            turn.inFlight = false
            turn.started = false
          })),
          Effect.provideService(ChatTransport, transport)
        )
      const finish = () => {
        agent().setStatus("idle")
        agent().setActiveTool(null)
        chat().setLoading(false)
      }

      chat().setError(null)
      chat().setLoading(true)
      agent().setActiveTool(null)
      yield* checkAgent

      const jobs: Array<DispatchedJob> = []
      const executeAll = function*(toolCalls: ReadonlyArray<ToolCall>) {
        agent().setStatus("processing")
        for (const call of toolCalls) {
          // Every call gets its result, run or not: an unanswered call would make every later provider call invalid.
          if (turn.stopRequested) {
            const toolResult: ToolResult = { toolCallId: call.id, name: call.name, error: notRunWhenStopped }
            append({ role: "tool", content: toolMessageContent(toolResult), toolResult })
            continue
          }
          agent().setActiveTool(call.name)
          const toolResult = yield* resolveToolCall(call, agentContext)
          append({ role: "tool", content: toolMessageContent(toolResult), toolResult })
        }
        agent().setActiveTool(null)
      }

      // A history that ends with calls nobody answered yet (a wake turn's answer asking for a client
      // tool, found by a re-sync) is resumed: those calls are executed before the model is asked again.
      const last = history.at(-1)
      // (Not the calls that wait for the user's approval: the server runs those, once decided.)
      const pending = clientCallsWaiting(history)
      if (pending.length > 0) {
        yield* executeAll(pending)
        if (turn.stopRequested && last !== undefined) {
          finish()
          return { _tag: "Stopped", message: last, iterations: 0, jobs } satisfies RunResult
        }
      }

      // Every call of an answer is this client's to run; the cap leaves the last answer's calls unrun.
      const end = yield* runSteps({
        ask: () =>
          Effect.gen(function*() {
            agent().setStatus("sending")
            const answer = yield* ask({
              messages: history,
              ...(agentContext === null ? {} : { context: agentContext }),
              chatId,
              ...named
            })
            if (answer.response.jobs !== undefined) jobs.push(...answer.response.jobs)
            return { ...answer, toolCalls: answer.response.toolCalls ?? [] }
          }),
        owns: () => true,
        stopBefore: [
          // What the server stored: the text so far, marked stopped. Its calls, if any had arrived, are not run.
          { reason: "streamStopped", when: ({ answer }) => answer.stopped },
          { reason: "IterationLimit", when: ({ owned, step }) => step >= maxIterations && owned.length > 0 }
        ],
        run: ({ answer: { response }, owned }) =>
          Effect.gen(function*() {
            // A whole answer's text arrives at once: the round is `responding` then, as a streamed one is while its text arrives.
            if (!streaming && response.content !== "") agent().setStatus("responding")
            const message = settle({ ...serverId(response), role: "assistant", content: stripNul(response.content), toolCalls: owned })
            yield* executeAll(owned)
            return message
          }),
        stopWhen: [{ reason: "Stopped", when: () => turn.stopRequested }]
      })
      const { response } = end.answer
      const iterations = end.step
      switch (end.reason) {
        case "answered": {
          agent().setStatus("responding")
          // The server ran tools of its own (MCP), or dispatched jobs (their calls answered at once by their
          // acknowledgements): those calls and results are the transcript's, as stored.
          if (turn.serverRan || jobs.length > 0) {
            const stored = yield* Effect.option(transport.transcript(chatId))
            if (stored._tag === "Some" && stored.value.length > 0) {
              chat().replaceMessages(stored.value)
              finish()
              const message = stored.value.findLast((m) => m.role === "assistant") ?? stored.value.at(-1)!
              const waiting = response.pendingApprovals ?? []
              return { _tag: "Answered", message, iterations, jobs, ...(waiting.length === 0 ? {} : { pendingApprovals: waiting }) } satisfies RunResult
            }
          }
          const waiting = response.pendingApprovals ?? []
          // Results sent while approvals wait: the answer is the message that asks, which the history has.
          const asking = response.content === "" ? history.find((m) => m.id === response.messageId) : undefined
          if (asking !== undefined) {
            if (chat().streamingId !== null) chat().finishStreaming(null)
            finish()
            return { _tag: "Answered", message: asking, iterations, jobs, pendingApprovals: waiting } satisfies RunResult
          }
          // Calls waiting for the user's approval are kept with the message, as the server stored it.
          const message = settle({
            ...serverId(response),
            role: "assistant",
            content: stripNul(response.content),
            ...(waiting.length === 0 ? {} : askingFor(waiting))
          })
          finish()
          return { _tag: "Answered", message, iterations, jobs, ...(waiting.length === 0 ? {} : { pendingApprovals: waiting }) } satisfies RunResult
        }
        case "streamStopped": {
          const message = settle({ ...serverId(response), role: "assistant", content: stripNul(response.content), metadata: { stopped: true } })
          finish()
          return { _tag: "Stopped", message, iterations, jobs } satisfies RunResult
        }
        case "IterationLimit": {
          // The last answer's tool calls are not executed, and not appended either: an assistant
          // message whose calls have no results would make every later provider call invalid.
          const message = settle({ role: "assistant", content: iterationLimitMessage })
          finish()
          return { _tag: "IterationLimit", message, iterations, jobs } satisfies RunResult
        }
        case "Stopped":
          finish()
          return { _tag: "Stopped", message: end.ran, iterations, jobs } satisfies RunResult
      }
    }).pipe(
      Effect.tapError((error) =>
        Effect.sync(() => {
          chat().setError(turnFailure(error))
          agent().setStatus("error")
          agent().setActiveTool(null)
        })
      ),
      Effect.onInterrupt(() => Effect.sync(() => agent().reset())),
      // Whatever happened (a defect included), the UI must not stay "loading".
      Effect.ensuring(Effect.sync(() => {
        if (chat().loading) chat().setLoading(false)
      })),
      traced("Orchestrator.run", () => noStackTrace)
    )

  // Checked before the message is stored: a refused agent leaves no unanswered message in the history.
  const send: Orchestrator["send"] = (content, context) =>
    checkAgent.pipe(
      Effect.tapError((error) =>
        Effect.sync(() => {
          chat().setError(turnFailure(error))
          agent().setStatus("error")
        })
      ),
      Effect.andThen(Effect.sync(() => chat().addMessage({ role: "user", content: stripNul(content) }))),
      Effect.andThen(run(undefined, context))
    )

  const decide = makeDecide({ chatStore, agentStore, run, ...(onDelta === undefined ? {} : { onDelta }) })

  return { run, send, checkAgent, stop, decide }
}
