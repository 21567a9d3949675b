/**
 * The provider adapter port (docs/chat.md): `chat(params)` and, for a turn
 * that streams (docs/streaming.md), `stream(params)`, over provider-agnostic
 * parameters. Concrete adapters
 * (openai-compatible, anthropic, scripted) are Layers of this service, chosen
 * by configuration in `ProviderConfig.ts`.
 */
import { Context, Data, Effect, Queue, Stream } from "effect"
import type { ProviderChatParams, ProviderChatResponse, ProviderFailureReason } from "@switchboard/domain"

/**
 * Why a provider call failed. `NotConfigured` is the operator's to fix (502
 * naming what is missing); every other reason is the provider's (502 "LLM
 * provider error", with the cause logged server-side, secrets redacted).
 */
/** `BudgetExceeded`: not the provider's failure — the call was not made, its user's tokens being used up (`USER_DAILY_TOKENS`). */
export type ProviderErrorReason = "NotConfigured" | "Network" | "Timeout" | "Status" | "InvalidResponse" | "TooLarge" | "BudgetExceeded"

export class ProviderError extends Data.TaggedError("ProviderError")<{
  readonly reason: ProviderErrorReason
  /** For logs only: already free of secrets. */
  readonly message: string
  readonly status?: number
  /** With `Network`: the system's error code found in the cause (`ECONNREFUSED`, `ENOTFOUND`, …). */
  readonly code?: string
  /** With `NotConfigured`: the environment variables that are missing or invalid. */
  readonly missing?: ReadonlyArray<string>
}> {}

const networkReasons: Record<string, ProviderFailureReason> = {
  ECONNREFUSED: "connection_refused",
  ECONNRESET: "connection_reset",
  EPIPE: "connection_reset",
  UND_ERR_SOCKET: "connection_reset",
  ENOTFOUND: "dns",
  EAI_AGAIN: "dns",
  EAI_NONAME: "dns"
}

/**
 * The `reason` a client is shown (the 502 body's, a job's error): the kind of
 * failure only. The message, which quotes the provider (redacted, but still
 * its words), stays in the server's log.
 */
export const publicReason = (error: ProviderError): ProviderFailureReason => {
  switch (error.reason) {
    case "NotConfigured":
      return "not_configured"
    case "Network":
      return (error.code !== undefined ? networkReasons[error.code] : undefined) ?? "unreachable"
    case "Timeout":
      return "timeout"
    case "Status":
      return error.status === undefined ? "invalid_response" : `status_${error.status}`
    case "InvalidResponse":
      return "invalid_response"
    case "TooLarge":
      return "too_large"
    case "BudgetExceeded":
      return "budget_exceeded"
  }
}

/**
 * What a streamed provider call yields, in the provider's order: text and tool calls as they are
 * generated, then exactly one `finish` whose response is what `chat` would have answered — its
 * `content` the text deltas concatenated, its `toolCalls` the calls started (same ids, arguments
 * parsed as `chat` parses them), with the usage when the provider reported it.
 */
export type ProviderStreamEvent =
  | ProviderDelta
  | { readonly type: "finish"; readonly response: ProviderChatResponse }

/** A piece of a streamed answer, before its `finish`. */
export type ProviderDelta =
  | { readonly type: "text-delta"; readonly delta: string }
  | { readonly type: "tool-call-start"; readonly id: string; readonly name: string }
  | { readonly type: "tool-call-delta"; readonly id: string; readonly delta: string }

/**
 * Where a streamed call hands its pieces: each batch (all that one network read brought) in the
 * callback of that read, no fiber between the socket and the consumer. An error returned ends the
 * call with it (the request aborted).
 */
export type StreamSink = (deltas: ReadonlyArray<ProviderDelta>) => ProviderError | undefined

export class ProviderAdapter extends Context.Service<ProviderAdapter, {
  chat(params: ProviderChatParams): Effect.Effect<ProviderChatResponse, ProviderError>
  /**
   * The same call, streamed: its pieces pushed to `sink` as they arrive, the whole answer (the
   * `finish`) as its result. Interrupting it aborts the provider request (its connection is
   * closed), so a stopped turn stops the generation it paid for. `eventsOf` reads it as a stream.
   */
  streamTo(params: ProviderChatParams, sink: StreamSink): Effect.Effect<ProviderChatResponse, ProviderError>
}>()("switchboard/providers/ProviderAdapter") {}

/**
 * A streamed call as a `Stream` of its events, `finish` last. Pushing is the port's form because a
 * streamed turn's CPU per delta is mostly what stands between the socket and the consumer (`npm run
 * bench`): a stream's pull per delta, through its stages, cost more than everything else it does.
 */
export const eventsOf = (
  streamTo: ProviderAdapter["Service"]["streamTo"],
  params: ProviderChatParams
): Stream.Stream<ProviderStreamEvent, ProviderError> =>
  Stream.callback<ProviderStreamEvent, ProviderError>((queue) =>
    streamTo(params, (deltas) => {
      Queue.offerAllUnsafe(queue, deltas)
      return undefined
    }).pipe(
      Effect.matchEffect({
        onFailure: (error) => Queue.fail(queue, error),
        onSuccess: (response) =>
          Effect.sync(() => {
            Queue.offerUnsafe(queue, { type: "finish", response })
            Queue.endUnsafe(queue)
          })
      })
    )
  )

/**
 * `streamTo` over a `Stream` of events (fakes and the scripted provider, whose answers are streams
 * already): each array pulled is pushed, and the `finish` is the result. A stream without one is
 * an `InvalidResponse`, as a provider's that ends early.
 */
export const pushEvents = (
  events: Stream.Stream<ProviderStreamEvent, ProviderError>,
  sink: StreamSink
): Effect.Effect<ProviderChatResponse, ProviderError> =>
  Effect.suspend(() => {
    let response: ProviderChatResponse | undefined
    return events.pipe(
      Stream.runForEachArray((batch) => {
        const deltas: Array<ProviderDelta> = []
        for (const event of batch) {
          if (event.type === "finish") response ??= event.response
          else if (response === undefined) deltas.push(event)
        }
        const failure = deltas.length > 0 ? sink(deltas) : undefined
        return failure === undefined ? Effect.void : Effect.fail(failure)
      }),
      Effect.flatMap(() =>
        response === undefined
          ? Effect.fail(new ProviderError({ reason: "InvalidResponse", message: "the provider's stream ended without finishing" }))
          : Effect.succeed(response)
      )
    )
  })

/** A whole answer's pieces: its text in one delta, each call started with its arguments in one delta. */
export const deltasOfAnswer = (response: ProviderChatResponse): Array<ProviderDelta> => {
  const deltas: Array<ProviderDelta> = []
  if (response.content !== "") deltas.push({ type: "text-delta", delta: response.content })
  for (const call of response.toolCalls ?? []) {
    deltas.push({ type: "tool-call-start", id: call.id, name: call.name })
    deltas.push({ type: "tool-call-delta", id: call.id, delta: call.invalidArgs ?? JSON.stringify(call.args) })
  }
  return deltas
}

/** `streamTo` over a whole answer, for adapters (and fakes) whose provider does not stream: its pieces in one batch, the answer the result. */
export const pushAnswer = <R>(
  answer: Effect.Effect<ProviderChatResponse, ProviderError, R>,
  sink: StreamSink
): Effect.Effect<ProviderChatResponse, ProviderError, R> =>
  Effect.flatMap(answer, (response) => {
    const deltas = deltasOfAnswer(response)
    const refused = deltas.length > 0 ? sink(deltas) : undefined
    return refused === undefined ? Effect.succeed(response) : Effect.fail(refused)
  })

/** A media file to transcribe, as uploaded by the client. */
export interface TranscriptionInput {
  readonly data: Uint8Array
  readonly fileName: string
  readonly mediaType: string
  readonly language?: string
}

/** The server half of `transcribe_video`: the configured provider's transcription endpoint. */
export class Transcriber extends Context.Service<Transcriber, {
  transcribe(input: TranscriptionInput): Effect.Effect<string, ProviderError>
}>()("switchboard/providers/Transcriber") {}
