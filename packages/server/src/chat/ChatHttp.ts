/**
 * Handlers of the chat group: thin, they translate service results to the
 * wire errors of CONTRACT.md. Provider failures are logged here, once, with
 * the (already redacted) cause; the client only ever sees the fixed 502 body.
 */
import { Api, InvalidRequest, ProviderFailed, ProviderNotConfigured } from "@switchboard/domain"
import { Effect, FileSystem } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { ProviderError } from "../llm/ProviderAdapter.ts"
import { Transcriber } from "../llm/ProviderAdapter.ts"
import { ChatRepo } from "./ChatRepo.ts"
import { ChatTurns } from "./ChatTurns.ts"

export const toWireError = (error: ProviderError): Effect.Effect<never, ProviderFailed | ProviderNotConfigured> =>
  error.reason === "NotConfigured"
    ? Effect.logWarning("LLM provider not configured", error.message).pipe(
      Effect.andThen(Effect.fail(
        new ProviderNotConfigured({
          error: `LLM provider not configured: ${
            error.missing && error.missing.length > 0 ? `missing ${error.missing.join(", ")}` : error.message
          }`,
          missing: error.missing ?? []
        })
      ))
    )
    : Effect.logError("LLM provider error", { reason: error.reason, status: error.status, cause: error.message }).pipe(
      Effect.andThen(Effect.fail(new ProviderFailed({})))
    )

export const ChatHttp = HttpApiBuilder.group(Api, "chat", Effect.fn(function*(handlers) {
  const turns = yield* ChatTurns
  const repo = yield* ChatRepo
  const transcriber = yield* Transcriber
  const fs = yield* FileSystem.FileSystem

  return handlers.handleAll({
    chat: ({ payload }) => turns.run(payload).pipe(Effect.catchTag("ProviderError", toWireError)),
    messages: ({ params }) => repo.transcript(params.chatId).pipe(Effect.map((messages) => ({ messages }))),
    transcribe: Effect.fn(function*({ payload }) {
      const data = yield* fs.readFile(payload.file.path).pipe(
        Effect.mapError(() => new InvalidRequest({ error: "The uploaded file could not be read" }))
      )
      if (data.byteLength === 0) return yield* new InvalidRequest({ error: "Invalid request: file is empty" })
      const text = yield* transcriber.transcribe({
        data,
        fileName: payload.file.name,
        mediaType: payload.file.contentType,
        ...(payload.language === undefined ? {} : { language: payload.language })
      }).pipe(Effect.catchTag("ProviderError", toWireError))
      return { text }
    })
  })
}))
