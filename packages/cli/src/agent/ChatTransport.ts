/**
 * `ChatTransport`: the orchestrator's only way to reach the model — one
 * `POST /api/agent/chat` turn. A port so the orchestrator can be tested with a
 * scripted fake, and so every API/network failure reaches it as one error
 * type carrying a readable message.
 */
import type { ChatRequest, ChatResponse } from "@switchboard/domain"
import { Context, Data, Effect, Layer } from "effect"
import { ApiClient } from "../api/ApiClient.ts"
import type { ApiClientOptions } from "../api/ApiClient.ts"
import { describeApiFailure } from "../api/ApiFailure.ts"

/** The turn failed before the model answered: network, HTTP status, or a malformed answer. */
export class ChatTransportError extends Data.TaggedError("ChatTransportError")<{
  readonly message: string
  /** HTTP status, when the server answered. */
  readonly status?: number
  /** The server's snake_case error code (`provider_error`, `turn_in_flight`, …). */
  readonly code?: string
  readonly cause?: unknown
}> {}

export class ChatTransport extends Context.Service<ChatTransport, {
  send(request: ChatRequest): Effect.Effect<ChatResponse, ChatTransportError>
}>()("switchboard/cli/agent/ChatTransport") {
  /** Over the typed HttpApi client. */
  static readonly layerNoDeps: Layer.Layer<ChatTransport, never, ApiClient> = Layer.effect(
    ChatTransport,
    Effect.gen(function*() {
      const client = yield* ApiClient
      return ChatTransport.of({
        send: Effect.fn("ChatTransport.send")(function*(request: ChatRequest) {
          return yield* client.chat.chat({ payload: request }).pipe(
            Effect.catch((error) =>
              describeApiFailure(error).pipe(
                Effect.flatMap((failure) => Effect.fail(new ChatTransportError({ ...failure, cause: error })))
              )
            )
          )
        })
      })
    })
  )

  /** Production: HTTP to `baseUrl` with fetch, bearer token when given. */
  static readonly layer = (options: ApiClientOptions): Layer.Layer<ChatTransport> =>
    ChatTransport.layerNoDeps.pipe(Layer.provide(ApiClient.layer(options)))

  /** A transport answering with `send`; tests script the model with it. */
  static readonly layerTest = (
    send: (request: ChatRequest) => Effect.Effect<ChatResponse, ChatTransportError>
  ): Layer.Layer<ChatTransport> => Layer.succeed(ChatTransport, ChatTransport.of({ send }))
}
