/**
 * The chat routes (CONTRACT.md, Chat): one turn of the agent session, the
 * persisted transcript, and the server half of `transcribe_video`.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity } from "effect/http-api"
import { Multipart } from "effect/http"
import { ChatId, ChatRequest, ChatResponse, ChatTranscript, Transcription } from "./Chat.ts"
import { ChatNotFound, InvalidRequest, ProviderFailed, ProviderNotConfigured, TurnInFlight, Unauthenticated } from "./Errors.ts"
import { Text } from "./Json.ts"

/** `Authorization: Bearer $CHAT_TOKEN` on `/api/*`, enforced only when the server has a CHAT_TOKEN. */
export class ChatAuth extends HttpApiMiddleware.Service<ChatAuth>()("switchboard/domain/ChatAuth", {
  security: { bearer: HttpApiSecurity.bearer },
  error: Unauthenticated
}) {}

/** Request decoding failures (body, path, query) become 400 `{ error, code: "invalid_request" }` naming the path. */
export class RequestErrors extends HttpApiMiddleware.Service<RequestErrors>()("switchboard/domain/RequestErrors", {
  error: InvalidRequest
}) {}

export const TranscriptionUpload = Schema.Struct({
  file: Multipart.SingleFileSchema,
  language: Schema.optionalKey(Text.check(Schema.isPattern(/^[a-z]{2,3}(-[A-Za-z]{2,4})?$/)))
}).pipe(HttpApiSchema.asMultipart())

export class ChatApi extends HttpApiGroup.make("chat")
  .add(
    HttpApiEndpoint.post("chat", "/api/agent/chat", {
      payload: ChatRequest,
      success: ChatResponse,
      error: [InvalidRequest, TurnInFlight, ProviderFailed, ProviderNotConfigured]
    }),
    HttpApiEndpoint.get("messages", "/api/chats/:chatId/messages", {
      params: { chatId: ChatId },
      success: ChatTranscript,
      error: [ChatNotFound]
    }),
    HttpApiEndpoint.post("transcribe", "/api/media/transcriptions", {
      payload: TranscriptionUpload,
      success: Transcription,
      error: [InvalidRequest, ProviderFailed, ProviderNotConfigured]
    })
  )
  .middleware(ChatAuth)
{}
