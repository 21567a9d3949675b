/**
 * The typed client of the Switchboard HTTP API (the domain's `Api`), shared by
 * the chat transport and the transcription upload.
 *
 * `ChatAuth` is bearer security that the server enforces only when it has a
 * CHAT_TOKEN, so it is not `requiredForClient`: the token, when the user gives
 * one, is added to every request by mapping the underlying HttpClient.
 */
import { Api } from "@switchboard/domain"
import { Context, Layer } from "effect"
import type { Redacted } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"

export interface ApiClientOptions {
  /** e.g. `http://127.0.0.1:8787` */
  readonly baseUrl: string
  readonly token?: string | Redacted.Redacted<string> | undefined
}

export class ApiClient extends Context.Service<ApiClient, HttpApiClient.ForApi<typeof Api>>()(
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
      })
    )

  /** Production: the platform's `fetch`. */
  static readonly layer = (options: ApiClientOptions): Layer.Layer<ApiClient> =>
    ApiClient.layerNoDeps(options).pipe(Layer.provide(FetchHttpClient.layer))
}
