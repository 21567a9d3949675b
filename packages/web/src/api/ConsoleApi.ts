/**
 * How the console's pages talk to the server: the client package's typed
 * `ApiClient` (the CLI's own), configured with this origin and the current
 * token of a realm (`Session.ts`). Pages call `useApi()` (chat, jobs, agents:
 * `CHAT_TOKEN`) or `useAdminApi()` (the operator's `/admin` routes:
 * `ADMIN_TOKEN`) and run their calls with `run`, or with `useApiResult`; a 401
 * asks for the token, and a new token gives a new `ConsoleApi`, so whatever
 * depends on it runs again.
 *
 * The client package's other layers take the same `options`
 * (`ChatTransport.layer(api.options)`, `MediaTranscriber.layer(api.options)`);
 * a failure met there goes through `api.unauthorized(error)`.
 */
import { ApiClient, describeApiFailure } from "@switchboard/client"
import type { ApiClientOptions, ApiFailure } from "@switchboard/client"
import { Cause, Effect, Exit, Layer } from "effect"
import type { DependencyList } from "react"
import { useCallback, useEffect, useMemo, useState } from "react"
import { useStore } from "zustand"
import { askFor, isUnauthorized, sessionStore } from "./Session.ts"
import type { Realm } from "./Session.ts"

export interface ConsoleApi {
  readonly realm: Realm
  /** This origin and the realm's token, for the client package's layers. */
  readonly options: ApiClientOptions
  /** The typed client of the domain's `Api` (and the streamed turn's routes), with the token. */
  readonly client: ApiClient["Service"]
  /** The same client as a layer. */
  readonly layer: Layer.Layer<ApiClient>
  /**
   * Runs a call: resolves with its value, rejects with its failure (the typed error, e.g. an
   * `ApiError`); a 401 first asks for the realm's token. `signal` interrupts it.
   */
  readonly run: <A, E>(effect: Effect.Effect<A, E, ApiClient>, options?: { readonly signal?: AbortSignal }) => Promise<A>
  /** Whether a failure met elsewhere (the orchestrator's, a stream's) is a 401; when it is, asks for the token. */
  readonly unauthorized: (error: unknown) => boolean
}

const origin = () => (typeof location === "undefined" ? "http://127.0.0.1:8787" : location.origin)

/** The API of a realm with a token (`undefined`: none). `useApi`/`useAdminApi` are the usual way. */
export const makeConsoleApi = (realm: Realm, token: string | undefined, baseUrl: string = origin()): ConsoleApi => {
  const options: ApiClientOptions = { baseUrl, token }
  const layer = ApiClient.layer(options)
  const client = Effect.runSync(Effect.service(ApiClient).pipe(Effect.provide(layer)))
  const unauthorized = (error: unknown) => {
    if (!isUnauthorized(error)) return false
    // Only the token this client was made with: a later one may be good already.
    if (sessionStore.getState().tokens[realm] === token) askFor(realm)
    return true
  }
  return {
    realm,
    options,
    client,
    layer: Layer.succeed(ApiClient, client),
    unauthorized,
    run: async (effect, runOptions) => {
      const exit = await Effect.runPromiseExit(Effect.provideService(effect, ApiClient, client), { signal: runOptions?.signal })
      if (Exit.isSuccess(exit)) return exit.value
      const error = Cause.squash(exit.cause)
      unauthorized(error)
      throw error
    }
  }
}

const useRealmApi = (realm: Realm): ConsoleApi => {
  const token = useStore(sessionStore, (state) => state.tokens[realm])
  return useMemo(() => makeConsoleApi(realm, token), [realm, token])
}

/** The chat, jobs and agents routes (`/api/*`, `CHAT_TOKEN`). */
export const useApi = (): ConsoleApi => useRealmApi("chat")

/** The operator's routes (`/admin/*`, `ADMIN_TOKEN`). */
export const useAdminApi = (): ConsoleApi => useRealmApi("admin")

export type ApiResult<A> =
  | { readonly status: "loading" }
  | { readonly status: "success"; readonly value: A }
  | { readonly status: "failure"; readonly failure: ApiFailure; readonly error: unknown }

/**
 * One call's result, run when the component mounts and again when `api` (its token) or `deps`
 * change, or on `reload()`; interrupted when the component goes. A 401 asks for the token (the
 * result is then a failure until the new token runs it again).
 */
export const useApiResult = <A, E>(
  api: ConsoleApi,
  call: (client: ApiClient["Service"]) => Effect.Effect<A, E, ApiClient>,
  deps: DependencyList
): ApiResult<A> & { readonly reload: () => void } => {
  const [result, setResult] = useState<ApiResult<A>>({ status: "loading" })
  const [round, setRound] = useState(0)
  const reload = useCallback(() => setRound((n) => n + 1), [])
  useEffect(() => {
    const controller = new AbortController()
    setResult({ status: "loading" })
    api.run(call(api.client), { signal: controller.signal }).then(
      (value) => {
        if (!controller.signal.aborted) setResult({ status: "success", value })
      },
      (error: unknown) => {
        if (controller.signal.aborted) return
        setResult({ status: "failure", failure: Effect.runSync(describeApiFailure(error)), error })
      }
    )
    return () => controller.abort()
    // `call` is the caller's closure: `deps` say when it changes.
  }, [api, round, ...deps])
  return { ...result, reload }
}
