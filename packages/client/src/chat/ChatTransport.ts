/**
 * `ChatTransport`: the orchestrator's only way to reach the model — one
 * `POST /api/agent/chat` turn, answered whole (`send`) or streamed (`stream`),
 * and `stop` for a streamed turn that should end early — and the agent it
 * talks to: `agent(name)`
 * reads an agent's public view (`GET /api/agents/{name}`), whose tools the
 * orchestrator checks against its registry before the first turn. A port so
 * the orchestrator can be tested with a scripted fake, and so every
 * API/network failure reaches it as one error type carrying a readable
 * message.
 *
 * Two implementations with the same answers and the same errors: `layer`
 * (production) posts with the platform's `fetch` and decodes the answer with
 * the domain's `ChatResponse` schema; `layerNoDeps` goes through the typed
 * HttpApi client. The loop makes one call per step, and the typed client
 * costs about 250 µs of CPU more per call than `fetch` (`npm run bench`,
 * orchestrator case), so the step's own request skips it. The agent lookup,
 * once per orchestrator, goes through the typed client in both, built on the
 * first lookup so a transport that never names an agent never pays for it.
 * `stream` and `stop` are the ApiClient module's `fetch` calls in both.
 */
import { ChatResponse } from "@switchboard/domain"
import type { AgentInfo, AgentName, ApprovalDecision, ChatMessage, ChatRequest, UiChunk } from "@switchboard/domain"
import { Context, Data, Effect, Layer, Result, Schema, Stream } from "effect"
import * as SchemaJITCompiler from "effect/schema/SchemaJITCompiler"
import { ApiClient, credentialHeaders, endpointOf, makeTurnStreams } from "../api/ApiClient.ts"
import type { ApiClientOptions, TurnStreams } from "../api/ApiClient.ts"
import { describeApiError, describeApiFailure, describeErrorResponse, rootCause } from "../api/ApiFailure.ts"
import type { ApiError, ApiFailure } from "../api/ApiFailure.ts"
import { chunksOfResponse } from "./TurnChunks.ts"

/** The turn failed before the model answered: network, HTTP status, or a malformed answer. */
export class ChatTransportError extends Data.TaggedError("ChatTransportError")<{
  readonly message: string
  /** HTTP status, when the server answered. */
  readonly status?: number
  /** The server's snake_case error code (`provider_error`, `turn_in_flight`, …). */
  readonly code?: string
  /** Why, when the server says (a `provider_error`'s `status_401`, `timeout`, …). */
  readonly reason?: string
  /**
   * Seconds to wait before asking again, when the server says: a 429 `rate_limited`'s, or a 503
   * `overloaded`'s (the replica runs as many turns as it admits; `message` says it is busy).
   */
  readonly retryAfter?: number
  readonly cause?: unknown
}> {}

export class ChatTransport extends Context.Service<ChatTransport, {
  send(request: ChatRequest): Effect.Effect<ChatResponse, ChatTransportError>
  /**
   * The same turn streamed: its chunks as they arrive (`TurnChunks` folds them into the answer). An
   * error chunk is a chunk, not a failure; interrupting the stream closes the connection only.
   */
  stream(request: ChatRequest): Stream.Stream<UiChunk, ChatTransportError>
  /** Stops the chat's running turn, on whichever replica runs it: whether one was running. */
  stop(chatId: string): Effect.Effect<boolean, ChatTransportError>
  /** An agent's public view: its client tools, job kinds and context schema (never its prompt). */
  agent(name: AgentName): Effect.Effect<AgentInfo, ChatTransportError>
  /** Decides a server tool call that waits for approval (202: the chat goes on as a turn of its own). */
  decide(chatId: string, approvalId: string, decision: ApprovalDecision): Effect.Effect<void, ChatTransportError>
  /** The chat's running turn from its first chunk, live (empty: none runs). */
  resume(chatId: string): Stream.Stream<UiChunk, ChatTransportError>
  /** The chat's stored transcript (`GET /api/chats/{chatId}/messages`): what a client re-syncs from. */
  transcript(chatId: string): Effect.Effect<ReadonlyArray<ChatMessage>, ChatTransportError>
}>()("switchboard/client/chat/ChatTransport") {
  /** Over the typed HttpApi client. */
  static readonly layerNoDeps: Layer.Layer<ChatTransport, never, ApiClient> = Layer.effect(
    ChatTransport,
    Effect.gen(function*() {
      const client = yield* ApiClient
      return ChatTransport.of({
        send: Effect.fn("ChatTransport.send")(function*(request: ChatRequest) {
          return yield* client.chat.chat({ payload: request }).pipe(Effect.catch(transportError))
        }),
        ...streamedTurns(client),
        ...chatRoutes(Effect.succeed(client)),
        agent: (name) => lookUpAgent(client, name)
      })
    })
  )

  /** Production: HTTP to `baseUrl` with fetch, with the options' credentials (asked per request). */
  static readonly layer = (options: ApiClientOptions): Layer.Layer<ChatTransport> =>
    Layer.effect(
      ChatTransport,
      Effect.map(
        Effect.cached(Effect.service(ApiClient).pipe(Effect.provide(ApiClient.layer(options)))),
        (typedClient) => makeFetchTransport(options, typedClient)
      )
    )

  /**
   * A transport answering with `send`; tests script the model with it. `stream` answers with the
   * same answers as chunks (`chunksOfResponse`), and `stop` finds no running turn. `agent`
   * answers the lookups; without it every agent is unknown (404 `agent_not_found`).
   */
  static readonly layerTest = (
    send: (request: ChatRequest) => Effect.Effect<ChatResponse, ChatTransportError>,
    agent: (name: AgentName) => Effect.Effect<AgentInfo, ChatTransportError> = (name) =>
      Effect.fail(new ChatTransportError({ message: `No agent named "${name}"`, status: 404, code: "agent_not_found" }))
  ): Layer.Layer<ChatTransport> =>
    Layer.succeed(
      ChatTransport,
      ChatTransport.of({
        send,
        stream: (request) => Stream.unwrap(Effect.map(send(request), (response) => Stream.fromIterable(chunksOfResponse(response)))),
        stop: () => Effect.succeed(false),
        agent,
        decide: (_chatId, approvalId) =>
          Effect.fail(new ChatTransportError({ message: `No approval "${approvalId}"`, status: 404, code: "approval_not_found" })),
        resume: () => Stream.empty,
        transcript: () => Effect.succeed([])
      })
    )
}

const transportError = (error: unknown): Effect.Effect<never, ChatTransportError> =>
  describeApiFailure(error).pipe(
    Effect.flatMap((failure) => Effect.fail(new ChatTransportError({ ...failure, cause: error })))
  )

const fromApiError = (error: ApiError): ChatTransportError => new ChatTransportError({ ...describeApiError(error), cause: error })

/** `stream`, `stop` and `resume` over the ApiClient module's routes. */
const streamedTurns = (turns: TurnStreams): Pick<ChatTransport["Service"], "stream" | "stop" | "resume"> => ({
  stream: (request) => Stream.mapError(turns.streamChat(request), fromApiError),
  stop: (chatId) => Effect.mapError(turns.stopTurn(chatId), fromApiError),
  resume: (chatId) => Stream.mapError(turns.resumeTurn(chatId), fromApiError)
})

/** The approval and transcript routes, over the typed client. */
const chatRoutes = (typedClient: Effect.Effect<ApiClient["Service"]>): Pick<ChatTransport["Service"], "decide" | "transcript"> => ({
  decide: (chatId, approvalId, decision) =>
    Effect.flatMap(typedClient, (client) => client.chat.decide({ params: { chatId, approvalId }, payload: decision })).pipe(
      Effect.asVoid,
      Effect.catch(transportError),
      Effect.withSpan("ChatTransport.decide")
    ),
  transcript: (chatId) =>
    Effect.flatMap(typedClient, (client) => client.chat.messages({ params: { chatId } })).pipe(
      Effect.map((answer) => answer.messages),
      Effect.catch(transportError)
    )
})

const lookUpAgent = (client: ApiClient["Service"], name: AgentName): Effect.Effect<AgentInfo, ChatTransportError> =>
  client.agents.get({ params: { name } }).pipe(
    Effect.catch(transportError),
    Effect.withSpan("ChatTransport.agent", { attributes: { agent: name } })
  )

const chatEndpoint = endpointOf("chat", "chat")

// The answer is decoded once per loop step: compile its decoder (Effect's Schema JIT, for this
// schema only, so an app embedding the client keeps its own global choice), and decode
// synchronously inside the step's one async operation instead of as further effects.
SchemaJITCompiler.enable(ChatResponse.ast)
const decodeChatResponse = Schema.decodeUnknownResult(ChatResponse)

type Answer =
  | { readonly _tag: "Response"; readonly status: number; readonly text: string; readonly retryAfter: string | null }
  | { readonly _tag: "Unreachable"; readonly cause: unknown }

const makeFetchTransport = (
  options: ApiClientOptions,
  typedClient: Effect.Effect<ApiClient["Service"]>
): ChatTransport["Service"] => {
  const url = `${options.baseUrl.replace(/\/+$/, "")}${chatEndpoint.path}`
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" }
  const credentials = Effect.mapError(credentialHeaders(options), fromApiError)
  const fail = (failure: ApiFailure, cause?: unknown) =>
    Effect.fail(new ChatTransportError({ ...failure, ...(cause === undefined ? {} : { cause }) }))

  const post = async (request: ChatRequest, auth: Record<string, string>, signal: AbortSignal): Promise<Answer> => {
    try {
      const response = await fetch(url, { method: chatEndpoint.method, headers: { ...headers, ...auth }, body: JSON.stringify(request), signal })
      return { _tag: "Response", status: response.status, text: await response.text(), retryAfter: response.headers.get("retry-after") }
    } catch (cause) {
      return { _tag: "Unreachable", cause }
    }
  }

  const answered = (answer: Answer): Effect.Effect<ChatResponse, ChatTransportError> => {
    if (answer._tag === "Unreachable") {
      const root = rootCause(answer.cause)
      return fail({ message: `cannot reach the server: ${chatEndpoint.method} ${url}${root === undefined ? "" : `: ${root}`}` }, answer.cause)
    }
    const { retryAfter, status, text } = answer
    let body: unknown
    try {
      body = text === "" ? null : JSON.parse(text)
    } catch {
      body = undefined
    }
    if (status < 200 || status > 299) return fail(describeErrorResponse(status, body, retryAfter))
    const decoded = decodeChatResponse(body)
    return Result.isSuccess(decoded)
      ? Effect.succeed(decoded.success)
      : fail({ message: `the request or its answer does not match the API: ${decoded.failure.message}` }, decoded.failure)
  }

  return ChatTransport.of({
    // Interrupting the effect aborts the signal, and with it the request.
    send: (request) =>
      Effect.flatMap(credentials, (auth) => Effect.flatMap(Effect.promise((signal) => post(request, auth, signal)), answered)),
    ...streamedTurns(makeTurnStreams(options)),
    ...chatRoutes(typedClient),
    agent: (name) => Effect.flatMap(typedClient, (client) => lookUpAgent(client, name))
  })
}
