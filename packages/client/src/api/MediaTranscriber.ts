/**
 * `MediaTranscriber`: the client half of `transcribe_video`'s upload. It sends
 * media bytes to `POST /api/media/transcriptions` (multipart: `file`, optional
 * `language`) and gets the transcript text back. The server holds the
 * provider key; the client never does.
 *
 * The upload goes through the typed HttpApi client: for a multipart endpoint
 * its payload is a `FormData`, which the client sends as `multipart/form-data`.
 */
import { Context, Data, Effect, Layer } from "effect"
import { ApiClient } from "./ApiClient.ts"
import type { ApiClientOptions } from "./ApiClient.ts"
import { describeApiFailure } from "./ApiFailure.ts"

export interface MediaUpload {
  readonly data: Uint8Array
  /** Providers detect the format from the extension: keep the original file name. */
  readonly fileName: string
  readonly mediaType: string
  /** ISO-639-1 code, e.g. "en". */
  readonly language?: string
}

export class TranscriptionError extends Data.TaggedError("TranscriptionError")<{
  readonly message: string
  readonly status?: number
  readonly code?: string
  readonly cause?: unknown
}> {}

export class MediaTranscriber extends Context.Service<MediaTranscriber, {
  transcribe(upload: MediaUpload): Effect.Effect<string, TranscriptionError>
}>()("switchboard/client/api/MediaTranscriber") {
  static readonly layerNoDeps: Layer.Layer<MediaTranscriber, never, ApiClient> = Layer.effect(
    MediaTranscriber,
    Effect.gen(function*() {
      const client = yield* ApiClient
      return MediaTranscriber.of({
        transcribe: Effect.fn("MediaTranscriber.transcribe")(function*(upload: MediaUpload) {
          const form = new FormData()
          // Copy into a fresh ArrayBuffer-backed view: Blob refuses views over a SharedArrayBuffer.
          form.append("file", new Blob([new Uint8Array(upload.data)], { type: upload.mediaType }), upload.fileName)
          if (upload.language !== undefined) form.append("language", upload.language)
          const { text } = yield* client.chat.transcribe({ payload: form }).pipe(
            Effect.catch((error) =>
              describeApiFailure(error).pipe(
                Effect.flatMap((failure) =>
                  Effect.fail(new TranscriptionError({ ...failure, message: `transcription failed: ${failure.message}`, cause: error }))
                )
              )
            )
          )
          return text
        })
      })
    })
  )

  static readonly layer = (options: ApiClientOptions): Layer.Layer<MediaTranscriber> =>
    MediaTranscriber.layerNoDeps.pipe(Layer.provide(ApiClient.layer(options)))
}
