/**
 * `run(messages, context, { serverUrl, token? | getToken?, user?, agent? })`: the orchestrator loop for
 * programs that do not write Effect. One user turn — sending, tool calls
 * validated and executed, results sent back, at most `maxIterations` rounds —
 * resolved as a Promise of the messages the turn added (the final assistant
 * message last). It is the same `makeOrchestrator` loop `switchboard chat`
 * runs, over stores that live for the turn (not persisted). With `agent`,
 * every request names it, and before the first request the agent's client
 * tools are checked against the tools given (or the built-in registry).
 *
 * Answers stream in (`onDelta` hears each piece of text as it arrives;
 * `streaming: false` waits for each answer whole); aborting the signal stops
 * the server's turn as well.
 *
 * The HTTP client of a `serverUrl` is built once and kept for the process
 * (building it compiles the API's schemas): every later `run` against the
 * same server reuses it and its keep-alive connections, whatever its
 * credentials — they are the call's (`CallerCredentials`), so a JWT per user,
 * refreshed every few minutes, builds nothing.
 */
import type { ChatMessage, JsonObject, ToolParameter } from "@switchboard/domain"
import { approvalResultId } from "@switchboard/domain"
import { Cause, Effect, Exit, Layer, ManagedRuntime, References } from "effect"
import { CallerCredentials } from "../api/ApiClient.ts"
import type { Credentials } from "../api/ApiClient.ts"
import { MediaTranscriber } from "../api/MediaTranscriber.ts"
import { makeTransientAgentStore } from "../stores/AgentStore.ts"
import { makeTransientChatStore } from "../stores/ChatStore.ts"
import type { NewChatMessage } from "../stores/ChatStore.ts"
import { makeDefaultRegistry } from "../tools/DefaultRegistry.ts"
import { ToolRegistry } from "../tools/ToolRegistry.ts"
import type { ReadAsset } from "../tools/TranscribeVideo.ts"
import { AgentToolsMissing } from "./AgentToolsMissing.ts"
import { ChatTransport, ChatTransportError } from "./ChatTransport.ts"
import { makeOrchestrator } from "./Orchestrator.ts"
import type { TurnContext, TurnError } from "./Orchestrator.ts"

/** A client-side tool with a plain (sync or async) `execute`; throwing or rejecting is a tool error the model sees. */
export interface RunTool {
  readonly name: string
  readonly description: string
  readonly parameters: ReadonlyArray<ToolParameter>
  /** `agentContext` is the turn's context: the agent's own object (an `AgentContext` for the media editor). */
  readonly execute: (args: Readonly<Record<string, unknown>>, context: { readonly agentContext: JsonObject | null }) => unknown
}

export interface RunOptions extends Credentials {
  /** The Switchboard server, e.g. `http://127.0.0.1:8787`. */
  readonly serverUrl: string
  /**
   * A fixed bearer token: a user's JWT, or the server's `CHAT_TOKEN` (then `user` names the user
   * the turn is for). For JWTs that expire, prefer `getToken`: asked before every request of the
   * turn, so a long turn outlives its first token. A `getToken` that rejects rejects the run
   * with a `ChatTransportError` saying so (nothing is sent).
   */
  readonly token?: string | undefined
  /**
   * The agent to talk to (`agent` in the body); default: the chat's, or the server's default agent.
   * Before the first request its client tools are checked against `tools` (or the built-in registry):
   * a missing one rejects with `AgentToolsMissing`, naming every missing tool.
   */
  readonly agent?: string | undefined
  /** The conversation the server persists the turn under; default: a new one per call. */
  readonly chatId?: string | undefined
  /** The tools the client executes; default: the built-in registry (`transcribe_video`, uploading to this server). */
  readonly tools?: ReadonlyArray<RunTool> | undefined
  /**
   * How the built-in `transcribe_video` reads an asset's bytes; default `fetchAsset` (`http(s):`, `blob:`,
   * `data:`). In Node, the CLI's `readAssetFromDisk` (`@switchboard/cli`) adds local files.
   */
  readonly readAsset?: ReadAsset | undefined
  /**
   * Aborting stops the turn (the request in flight is cancelled, the server's turn stopped: what it
   * had generated is stored, marked stopped) and rejects with an `AbortError`.
   */
  readonly signal?: AbortSignal | undefined
  /** Called with each piece of the answers' text as it streams in (the text of every round of the turn). */
  readonly onDelta?: ((text: string) => void) | undefined
  /** Whether answers stream in; default true. With false, each arrives whole (and `onDelta` is not called). */
  readonly streaming?: boolean | undefined
}

type Client = ManagedRuntime.ManagedRuntime<ChatTransport | MediaTranscriber, never>

const clients = new Map<string, Client>()

const clientFor = (serverUrl: string): Client => {
  let client = clients.get(serverUrl)
  if (client === undefined) {
    client = ManagedRuntime.make(
      Layer.mergeAll(
        // No credentials of its own: each run's are its `CallerCredentials`.
        ChatTransport.layer({ baseUrl: serverUrl }),
        MediaTranscriber.layer({ baseUrl: serverUrl }),
        // No span exporter here: recording the loop's spans would only cost CPU on every step.
        Layer.succeed(References.TracerEnabled, false)
      )
    )
    clients.set(serverUrl, client)
  }
  return client
}

const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"

const registryOf = (tools: ReadonlyArray<RunTool>): ToolRegistry => {
  const registry = new ToolRegistry()
  for (const tool of tools) {
    registry.register({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      // A sync throw (a defect) and a rejection (a failure) both reach the model as the tool's error.
      execute: (args, context) =>
        Effect.suspend(() => {
          const value = tool.execute(args, context)
          return isPromiseLike(value) ? Effect.tryPromise({ try: () => value, catch: (e) => e }) : Effect.succeed(value)
        })
    })
  }
  return registry
}

/**
 * One turn over `messages` (the conversation so far, the new user message
 * last; `id` and `timestamp` are filled in where missing) with `context`.
 * Resolves to the messages the turn added: assistant messages with their tool
 * calls, tool results, and the final assistant message last (when the loop
 * hits its cap of 8 rounds, that last message says "Reached maximum iteration
 * limit"). Rejects with a `ChatTransportError` (`message`, `status`, `code`;
 * a busy replica's 503 `overloaded` with `retryAfter`, its `message` saying
 * `Switchboard is busy (too many turns at once); retry in 3 s`; a refused
 * token's 401 `unauthenticated`; a `getToken` that rejected, `could not get a
 * token: …`, nothing sent) when the server, the network or the token fails, with `AgentToolsMissing` when the
 * agent needs a client tool the registry lacks (no request is sent then).
 */
export const run = async (
  messages: ReadonlyArray<NewChatMessage>,
  context: TurnContext | null | undefined,
  options: RunOptions
): Promise<ReadonlyArray<ChatMessage>> => {
  const turn = await turnOf(options)
  for (const message of messages) turn.chatStore.getState().addMessage(message)
  const before = turn.chatStore.getState().messages.length
  await turn.settle(turn.orchestrator.run(undefined, context ?? null))
  return turn.chatStore.getState().messages.slice(before)
}

/** The calls a turn's messages (`run`'s answer) leave waiting for the user's approval. */
export { pendingApprovalsIn } from "@switchboard/domain"

/**
 * The user's decision of a server tool call that waits for approval (a turn's last message names
 * it in `metadata.approvals`, `pendingApprovalsIn` lists them; docs/tools.md), in the chat `options.chatId`: sent, the continuation
 * followed (`onDelta` hears its text) and its messages resolved — the call's answer first, the
 * model's answer last — once the server has carried it out; the client tools the continuation's
 * answer asks for are run as `run` runs them. Rejects as `run` does; a decision made already is
 * a `ChatTransportError` with `code: "approval_decided"`.
 */
export const decideApproval = async (
  decision: { readonly approvalId: string; readonly approved: boolean; readonly reason?: string | undefined },
  options: RunOptions & { readonly chatId: string }
): Promise<ReadonlyArray<ChatMessage>> => {
  const turn = await turnOf(options)
  await turn.settle(turn.orchestrator.decide(decision.approvalId, decision.approved, decision.reason))
  const history = turn.chatStore.getState().messages
  const answered = history.findIndex((m) => m.id === approvalResultId(decision.approvalId))
  return answered < 0 ? history.slice(-1) : history.slice(answered)
}

/** What a `run` or a `decide` works with: the stores of one call, its orchestrator, and how its effect is run. */
const turnOf = async (options: RunOptions) => {
  const client = clientFor(options.serverUrl)
  const credentials: Credentials = { token: options.token, getToken: options.getToken, user: options.user }
  const chatStore = makeTransientChatStore()
  const agentStore = makeTransientAgentStore()
  if (options.chatId !== undefined) chatStore.setState({ chatId: options.chatId })
  const registry = options.tools !== undefined
    ? registryOf(options.tools)
    : makeDefaultRegistry(
      await client.runPromise(Effect.service(MediaTranscriber)),
      options.readAsset === undefined ? {} : { readAsset: options.readAsset }
    )
  const orchestrator = makeOrchestrator({
    chatStore,
    agentStore,
    registry,
    agent: options.agent,
    streaming: options.streaming,
    onDelta: options.onDelta
  })
  /** Runs the orchestrator's effect: its error rejects, as the promise API's callers expect. */
  const settle = async <A>(effect: Effect.Effect<A, TurnError, ChatTransport>): Promise<A> => {
    const exit = await client.runPromiseExit(
      effect.pipe(Effect.provideService(CallerCredentials, credentials)),
      options.signal === undefined ? undefined : { signal: options.signal }
    )
    if (Exit.isSuccess(exit)) return exit.value
    const failure = exit.cause.reasons.find(Cause.isFailReason)
    if (failure !== undefined && (failure.error instanceof ChatTransportError || failure.error instanceof AgentToolsMissing)) {
      throw failure.error
    }
    if (options.signal?.aborted === true) throw options.signal.reason ?? new DOMException("The turn was aborted", "AbortError")
    throw new Error(`the turn failed: ${String(exit.cause)}`)
  }
  return { chatStore, orchestrator, settle }
}

/** Closes the HTTP clients `run` keeps (their keep-alive connections), e.g. before a process exits. */
export const closeRunClients = async (): Promise<void> => {
  const open = [...clients.values()]
  clients.clear()
  await Promise.all(open.map((client) => client.dispose()))
}
