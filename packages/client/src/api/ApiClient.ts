/**
 * The client of the Switchboard HTTP API, shared by the chat transport, the
 * transcription upload and job watching: the typed client of the domain's
 * `Api`, and the streamed turn's routes (docs/streaming.md).
 *
 * Who a request acts for (docs/users.md) is its `Credentials`: a bearer token
 * — a fixed `token` (`CHAT_TOKEN`, or a JWT), or `getToken`, asked on every
 * request so a product hands out short-lived JWTs and refreshes them — and,
 * for a backend holding `CHAT_TOKEN`, the `user` it acts for
 * (`X-Switchboard-User`). `ChatAuth` is bearer security that the server
 * enforces only when it has `AUTH_*` or a CHAT_TOKEN, so it is not
 * `requiredForClient`: the headers are added to every request by mapping the
 * underlying HttpClient. A `getToken` that rejects fails the request, unsent,
 * with `ApiTokenUnavailable`. `CallerCredentials` replaces the client's own
 * for the requests of one fiber: one kept client serves callers with
 * different tokens (`run()`).
 *
 * The streamed turn's routes (`streamChat`, `stopTurn`, `resumeTurn`) are
 * plain `fetch` calls, for two reasons: the answer is read as it arrives, as
 * a `ReadableStream`, and the domain's `Api` does not declare `stop` and
 * `stream` yet (their paths are written here until it does). Their errors are
 * the typed client's (`ApiError`), from the same mapping of status and body.
 */
import { Api, ChatResponse, USER_HEADER } from "@switchboard/domain"
import type { ChatRequest, UiChunk } from "@switchboard/domain"
import { Context, Effect, Layer, Redacted, Result, Schema, Stream } from "effect"
import { FetchHttpClient, HttpClient, HttpClientError, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { chunksOfResponse } from "../chat/TurnChunks.ts"
import { answerError, ApiContractMismatch, ApiTokenUnavailable, ApiUnreachable, describeUnknown, rootCause } from "./ApiFailure.ts"
import type { ApiError } from "./ApiFailure.ts"
import { readUiChunks } from "./SseReader.ts"

/** Who the requests act for (docs/users.md). */
export interface Credentials {
  /** A fixed bearer token: the server's `CHAT_TOKEN`, or a user's JWT. */
  readonly token?: string | Redacted.Redacted<string> | undefined
  /**
   * Called before every request, its result sent as `Authorization: Bearer`: a product's
   * short-lived JWT, refreshed as it sees fit (cache it there: this client asks each time).
   * When given, `token` is not used. A rejection fails the request, unsent, with
   * `ApiTokenUnavailable`; an empty string sends no `Authorization`.
   */
  readonly getToken?: (() => Promise<string>) | undefined
  /**
   * `X-Switchboard-User`: the user a backend holding `CHAT_TOKEN` acts for (a JWT's `sub`
   * wins over it).
   */
  readonly user?: string | undefined
}

export interface ApiClientOptions extends Credentials {
  /** e.g. `http://127.0.0.1:8787` */
  readonly baseUrl: string
}

/**
 * Credentials for the requests made in a fiber (and the fibers it starts), in place of the
 * client's own options: `Effect.provideService(CallerCredentials, { getToken })`.
 */
export const CallerCredentials = Context.Reference<Credentials | undefined>("switchboard/client/api/CallerCredentials", {
  defaultValue: () => undefined
})

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
export const authHeaders = (token: Credentials["token"]): Record<string, string> => {
  const value = token === undefined ? "" : Redacted.isRedacted(token) ? Redacted.value(token) : token
  return value === "" ? {} : { authorization: `Bearer ${value}` }
}

const userHeaders = (user: string | undefined): Record<string, string> =>
  user === undefined || user === "" ? {} : { [USER_HEADER]: user }

const askToken = (getToken: () => Promise<string>): Effect.Effect<string, ApiTokenUnavailable> =>
  Effect.tryPromise({
    try: () => getToken(),
    catch: (cause) => new ApiTokenUnavailable({ message: `could not get a token: ${describeUnknown(cause)}`, cause })
  }).pipe(
    // A caller without types may resolve anything: never send `Bearer undefined`.
    Effect.flatMap((token: unknown) =>
      typeof token === "string"
        ? Effect.succeed(token)
        : Effect.fail(new ApiTokenUnavailable({ message: `could not get a token: getToken gave ${token === null ? "null" : typeof token}, not a string`, cause: token }))
    )
  )

/** The headers of `credentials`, fixed when they have no `getToken`. */
const headersOf = (credentials: Credentials): Effect.Effect<Record<string, string>, ApiTokenUnavailable> => {
  const user = userHeaders(credentials.user)
  const getToken = credentials.getToken
  if (getToken === undefined) return Effect.succeed({ ...authHeaders(credentials.token), ...user })
  return Effect.map(askToken(getToken), (token) => ({ ...authHeaders(token), ...user }))
}

/**
 * The credential headers of one request (`Authorization`, `X-Switchboard-User`): the fiber's
 * `CallerCredentials` when set, else `own`'s; `getToken` is asked now.
 */
export const credentialHeaders = (own: Credentials): Effect.Effect<Record<string, string>, ApiTokenUnavailable> => {
  const fixed = headersOf(own)
  return Effect.flatMap(Effect.service(CallerCredentials), (caller) => caller === undefined ? fixed : headersOf(caller))
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
  const credentials = credentialHeaders(options)
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
      const auth = yield* credentials
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
          const credentials = credentialHeaders(options)
          return client.pipe(HttpClient.mapRequestEffect((request) =>
            credentials.pipe(
              Effect.map((headers) => HttpClientRequest.setHeaders(request, headers)),
              // The typed client fails with an `HttpClientError` only: `toApiError` takes the cause out again.
              Effect.mapError((cause) =>
                new HttpClientError.HttpClientError({
                  reason: new HttpClientError.TransportError({ request, cause, description: cause.message })
                })
              )
            )
          ))
        }
      }).pipe(Effect.map((client) => ApiClient.of({ ...client, ...makeTurnStreams(options) })))
    )

  /** Production: the platform's `fetch`. */
  static readonly layer = (options: ApiClientOptions): Layer.Layer<ApiClient> =>
    ApiClient.layerNoDeps(options).pipe(Layer.provide(FetchHttpClient.layer))
}
