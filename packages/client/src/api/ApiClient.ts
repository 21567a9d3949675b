/**
 * The client of the Switchboard HTTP API, shared by the chat transport, the
 * transcription upload and job watching: the typed client of the domain's
 * `Api`, and the streamed turn's routes (docs/streaming.md).
 *
 * `ChatAuth` is bearer security that the server enforces only when it has a
 * CHAT_TOKEN, so it is not `requiredForClient`: the token, when the user gives
 * one, is added to every request by mapping the underlying HttpClient.
 *
 * The streamed turn's routes (`streamChat`, `stopTurn`, `resumeTurn`) are
 * plain `fetch` calls, for two reasons: the answer is read as it arrives, as
 * a `ReadableStream`, and the domain's `Api` does not declare `stop` and
 * `stream` yet (their paths are written here until it does). Their errors are
 * the typed client's (`ApiError`), from the same mapping of status and body.
 */
import { Api, ChatResponse } from "@switchboard/domain"
import type { ChatRequest, UiChunk } from "@switchboard/domain"
import { Context, Effect, Layer, Redacted, Result, Schema, Stream } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { chunksOfResponse } from "../chat/TurnChunks.ts"
import { answerError, ApiContractMismatch, ApiUnreachable, rootCause } from "./ApiFailure.ts"
import type { ApiError } from "./ApiFailure.ts"
import { readUiChunks } from "./SseReader.ts"

export interface ApiClientOptions {
  /** e.g. `http://127.0.0.1:8787` */
  readonly baseUrl: string
  readonly token?: string | Redacted.Redacted<string> | undefined
}

/** The streamed turn's routes. */
export interface TurnStreams {
  /**
   * `POST /api/agent/chat` with `Accept: text/event-stream`: the turn's chunks
   * as they arrive. An error before the stream fails it with the status's
   * `ApiError` (a 503 `overloaded` with its `retryAfter`, from the body or
   * the `Retry-After` header); a server that answers in JSON (one that does not stream) is
   * read as the chunks of that answer. Interrupting the stream closes the
   * connection (the server's turn goes on: `stopTurn` stops it).
   */
  readonly streamChat: (request: ChatRequest) => Stream.Stream<UiChunk, ApiError>
  /** `POST /api/chats/{chatId}/stop`: whether a running turn was stopped. */
  readonly stopTurn: (chatId: string) => Effect.Effect<boolean, ApiError>
  /**
   * `GET /api/chats/{chatId}/stream`: the running turn's chunks from its first
   * one, then live to its end; nothing when no turn of the chat runs (204).
   */
  readonly resumeTurn: (chatId: string) => Stream.Stream<UiChunk, ApiError>
}

/** An endpoint of the domain's HttpApi (one source of truth for its method and path). */
export const endpointOf = (group: string, name: string): { readonly path: string; readonly method: string } => {
  const groups = (Api as unknown as {
    readonly groups: Record<string, { readonly endpoints: Record<string, { readonly path: string; readonly method: string }> }>
  }).groups
  return groups[group]!.endpoints[name]!
}

/** `Authorization` for the token, when there is one. */
export const authHeaders = (token: ApiClientOptions["token"]): Record<string, string> => {
  const value = token === undefined ? "" : Redacted.isRedacted(token) ? Redacted.value(token) : token
  return value === "" ? {} : { authorization: `Bearer ${value}` }
}

const chatEndpoint = endpointOf("chat", "chat")
const decodeStopped = Schema.decodeUnknownResult(Schema.Struct({ stopped: Schema.Boolean }))
const decodeResponse = Schema.decodeUnknownResult(ChatResponse)

const parseJson = (text: string): unknown => {
  try {
    return text === "" ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The streamed turn's routes against `options.baseUrl`, with the platform's `fetch`. */
export const makeTurnStreams = (options: ApiClientOptions): TurnStreams => {
  const base = options.baseUrl.replace(/\/+$/, "")
  const auth = authHeaders(options.token)
  const chatPath = (chatId: string, route: string) => `/api/chats/${encodeURIComponent(chatId)}/${route}`
  const text = (response: Response) => Effect.promise(() => response.text().catch(() => ""))

  /**
   * A request whose answer is read in the caller's scope: closing it aborts
   * the request, and with it a body still streaming. A status other than 2xx
   * fails with its `ApiError`.
   */
  const open = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    Effect.gen(function*() {
      const url = `${base}${path}`
      const controller = yield* Effect.acquireRelease(
        Effect.sync(() => new AbortController()),
        (controller) => Effect.sync(() => controller.abort())
      )
      const response = yield* Effect.tryPromise({
        try: () => fetch(url, { method, headers: { ...headers, ...auth }, signal: controller.signal, ...(body === undefined ? {} : { body }) }),
        catch: (cause): ApiError => {
          const root = rootCause(cause)
          return new ApiUnreachable({ message: `${method} ${url}${root === undefined ? "" : `: ${root}`}`, cause })
        }
      })
      if (response.ok) return { response, source: `${method} ${url}` }
      return yield* Effect.fail<ApiError>(answerError(response.status, parseJson(yield* text(response)), response.headers.get("retry-after")))
    })

  const chunksOf = ({ response, source }: { readonly response: Response; readonly source: string }) =>
    response.body === null || response.status === 204 ? Stream.empty : readUiChunks(response.body, source)

  const isEventStream = (response: Response) => (response.headers.get("content-type") ?? "").includes("text/event-stream")

  return {
    streamChat: (request) =>
      Stream.unwrap(Effect.gen(function*() {
        const answer = yield* open(chatEndpoint.method, chatEndpoint.path, {
          "content-type": "application/json",
          accept: "text/event-stream"
        }, JSON.stringify(request))
        if (isEventStream(answer.response)) return chunksOf(answer)
        const decoded = decodeResponse(parseJson(yield* text(answer.response)))
        if (Result.isFailure(decoded)) return yield* Effect.fail(new ApiContractMismatch({ cause: decoded.failure }))
        return Stream.fromIterable(chunksOfResponse(decoded.success))
      })),
    stopTurn: (chatId) =>
      Effect.scoped(Effect.gen(function*() {
        const { response } = yield* open("POST", chatPath(chatId, "stop"), { accept: "application/json" })
        const decoded = decodeStopped(parseJson(yield* text(response)))
        if (Result.isFailure(decoded)) return yield* Effect.fail(new ApiContractMismatch({ cause: decoded.failure }))
        return decoded.success.stopped
      })),
    resumeTurn: (chatId) =>
      Stream.unwrap(Effect.map(open("GET", chatPath(chatId, "stream"), { accept: "text/event-stream" }), chunksOf))
  }
}

export class ApiClient extends Context.Service<ApiClient, HttpApiClient.ForApi<typeof Api> & TurnStreams>()(
  "switchboard/client/api/ApiClient"
) {
  /** Needs an `HttpClient`: tests may bring their own. */
  static readonly layerNoDeps = (options: ApiClientOptions): Layer.Layer<ApiClient, never, HttpClient.HttpClient> =>
    Layer.effect(
      ApiClient,
      HttpApiClient.make(Api, {
        baseUrl: options.baseUrl,
        transformClient: (client) => {
          const token = options.token
          return token === undefined || token === "" ? client : client.pipe(
            HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
          )
        }
      }).pipe(Effect.map((client) => ApiClient.of({ ...client, ...makeTurnStreams(options) })))
    )

  /** Production: the platform's `fetch`. */
  static readonly layer = (options: ApiClientOptions): Layer.Layer<ApiClient> =>
    ApiClient.layerNoDeps(options).pipe(Layer.provide(FetchHttpClient.layer))
}
