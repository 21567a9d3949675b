/**
 * The chat routes (docs/chat.md): one turn of the agent session, the
 * persisted transcript, and the server half of `transcribe_video`.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "effect/http-api"
import { Multipart } from "effect/http"
import { ChatId, ChatRequest, ChatResponse, ChatTranscript, Transcription } from "./Chat.ts"
import { ApprovalAccepted, ApprovalDecision, ApprovalId } from "./Approvals.ts"
import {
  AgentMismatch,
  ChatFull,
  ApprovalDecided,
  ApprovalNotFound,
  AgentNotFound,
  anyRouteErrors,
  BudgetExceeded,
  bodyErrors,
  ChatNotFound,
  DatabaseUnavailable,
  InvalidRequest,
  NotFound,
  NotReady,
  ProviderFailed,
  ProviderNotConfigured,
  Overloaded,
  RateLimited,
  TooManyMessages,
  TooManyParts,
  TurnInFlight,
  Unauthenticated
} from "./Errors.ts"
import { Text } from "./Json.ts"
import { UiChatRequest, UiTranscript } from "./UiMessages.ts"
import { ChatList, ChatListQuery, CurrentUser } from "./Users.ts"

/** How `/api/*` is authenticated, as the OpenAPI document says it. */
export const chatAuthRule = "`Authorization: Bearer <token>` on every `/api/*` operation: a user's JWT when the server " +
  "is started with `AUTH_JWKS_URL` or `AUTH_JWT_SECRET` (the user is its `sub`), or `CHAT_TOKEN` (a trusted backend, " +
  "acting for the user named in `X-Switchboard-User`). Without either (loopback only) anonymous calls are served, " +
  "as `X-Switchboard-User` or the user `default`. A missing or wrong token answers 401 `unauthenticated` with " +
  "`WWW-Authenticate: Bearer`. Everything of a chat is its user's: another user's chat is indistinguishable from none."

const bearer: HttpApiSecurity.Http = HttpApiSecurity.annotate(HttpApiSecurity.bearer, OpenApi.Description, chatAuthRule)

/** `Authorization: Bearer $CHAT_TOKEN` on `/api/*`, enforced only when the server has a CHAT_TOKEN. */
/**
 * Who the request acts for (`CurrentUser`): a JWT's `sub`, or `X-Switchboard-User` from a backend holding
 * `CHAT_TOKEN` (absent then: 400), or `default`. A refused token: 401.
 */
export class ChatAuth extends HttpApiMiddleware.Service<ChatAuth, { provides: CurrentUser; requires: never }>()(
  "switchboard/domain/ChatAuth",
  { security: { bearer }, error: [Unauthenticated, InvalidRequest] }
) {}

/** Request decoding failures (body, path, query) become 400 `{ error, code: "invalid_request" }` naming the path. */
export class RequestErrors extends HttpApiMiddleware.Service<RequestErrors>()("switchboard/domain/RequestErrors", {
  error: InvalidRequest
}) {}

/** A BCP 47-style language tag such as `en` or `pt-BR`. */
export const TranscriptionLanguage = Text.check(Schema.isPattern(/^[a-z]{2,3}(-[A-Za-z]{2,4})?$/u, {
  description: "An ISO 639 language code, optionally with a region or script: `en`, `pt-BR`"
}))

/**
 * A streamed turn's body as the OpenAPI document shows it: the AI SDK's UI message stream
 * (protocol v1) — `data: <chunk JSON>` events, `data: [DONE]` last (docs/streaming.md).
 */
export const UiMessageStream = Schema.String.pipe(
  HttpApiSchema.asText({ contentType: "text/event-stream" }),
  Schema.annotate({
    description: "Server-sent events: one `data: <chunk as JSON>` event per UI message chunk (`start`, `start-step`, " +
      "`text-delta`, `tool-input-available`, `tool-output-available`, `finish`, `error`, …), then `data: [DONE]`; " +
      "`: keep-alive` comments after 15 s without a chunk. Header `x-vercel-ai-ui-message-stream: v1`."
  })
)

export const StopResult = Schema.Struct({
  /** Whether a turn was running (and is now stopped, its partial answer stored). */
  stopped: Schema.Boolean
})
export type StopResult = typeof StopResult.Type

/** The upload takes two parts (`file`, optional `language`); more are refused before they are read. */
export const TRANSCRIPTION_MAX_PARTS = 2

/**
 * The upload's shape, as documented. It is read as a stream (the handler takes
 * the parts one by one, files into memory, no temporary files): the buffered
 * reader of the platform never answers a file part whose filename is empty.
 */
export const TranscriptionUpload = Schema.Struct({
  file: Multipart.SingleFileSchema,
  language: Schema.optionalKey(TranscriptionLanguage)
}).pipe(HttpApiSchema.asMultipartStream({ maxParts: TRANSCRIPTION_MAX_PARTS }))

/** What a turn can answer instead of its answer (or, streamed, before its stream starts). */
const turnErrors = [
  ...anyRouteErrors,
  ...bodyErrors,
  TooManyMessages,
  AgentNotFound,
  TurnInFlight,
  AgentMismatch,
  ChatFull,
  RateLimited,
  BudgetExceeded,
  Overloaded,
  ProviderFailed,
  ProviderNotConfigured,
  DatabaseUnavailable,
  NotReady
] as const

export class ChatApi extends HttpApiGroup.make("chat")
  .add(
    HttpApiEndpoint.post("chat", "/api/agent/chat", {
      payload: ChatRequest,
      success: ChatResponse,
      error: turnErrors
    }).annotateMerge(OpenApi.annotations({
      summary: "One turn of the agent session",
      description: "Sends the conversation (and the agent context) to the configured LLM provider with the client " +
        "tools' schemas, and returns the answer: text, and the tool calls the client must execute. With `chatId` " +
        "the turn is persisted write-ahead; a second turn for the same chat while one is in flight answers 409. A chat " +
        "the operator deletes while its turn runs still gets its answer, but nothing of the turn is stored. " +
        "`messageId` is the id the server gave the assistant message: reuse it for the client's copy. " +
        "`agent` names the agent the turn runs (default: the chat's, else `DEFAULT_AGENT`): an unknown one " +
        "answers 404 `agent_not_found`, one other than the chat's 409 `agent_mismatch`; `context` must satisfy " +
        "the agent's context schema (400 naming the path). With `Accept: text/event-stream` the turn is streamed " +
        "(the AI SDK's UI message stream, protocol v1) once the provider starts answering; errors before that are " +
        "the JSON answers above. A streamed turn outlives its connection."
    })),
    HttpApiEndpoint.get("list", "/api/chats", {
      query: ChatListQuery,
      success: ChatList,
      error: [...anyRouteErrors, InvalidRequest, DatabaseUnavailable, NotReady]
    }).annotateMerge(OpenApi.annotations({
      summary: "The caller's chats",
      description: "The chats of the request's user, most recently updated first, `limit` (default 50, at most 200) " +
        "per page; pass `nextBefore` as `before` for the next page. `title` is the chat's first user message, at " +
        "most 80 characters."
    })),
    HttpApiEndpoint.delete("remove", "/api/chats/:chatId", {
      params: { chatId: ChatId },
      success: HttpApiSchema.NoContent,
      error: [...anyRouteErrors, InvalidRequest, ChatNotFound, NotFound, DatabaseUnavailable, NotReady]
    }).annotateMerge(OpenApi.annotations({
      summary: "Delete one of the caller's chats",
      description: "Its transcript, its jobs and its running turn's markers go with it, as with the operator's " +
        "`DELETE /admin/chats/{chatId}`. 404 `chat_not_found` when the caller has no such chat."
    })),
    HttpApiEndpoint.get("follow", "/api/chats/:chatId/stream", {
      params: { chatId: ChatId },
      success: [UiMessageStream, HttpApiSchema.NoContent],
      error: [...anyRouteErrors, InvalidRequest, NotFound, DatabaseUnavailable, NotReady]
    }).annotateMerge(OpenApi.annotations({
      summary: "Follow the chat's running turn",
      description: "204 when no turn of the chat is running; else the running turn's stream from its first chunk, " +
        "then live to its end — on every replica, whichever runs the turn. Wake turns (a sub-agent's result " +
        "being answered) are turns of their chat too."
    })),
    HttpApiEndpoint.post("stop", "/api/chats/:chatId/stop", {
      params: { chatId: ChatId },
      success: StopResult,
      error: [...anyRouteErrors, InvalidRequest, NotFound, DatabaseUnavailable, NotReady]
    }).annotateMerge(OpenApi.annotations({
      summary: "Stop the chat's running turn",
      description: "Aborts the running turn's provider call on whichever replica runs it; what was generated so far " +
        "is stored as the assistant message with `metadata.stopped: true`, and the chat is free when this answers " +
        "(within 10 s). `{ stopped: false }` when no turn was running."
    })),
    HttpApiEndpoint.post("decide", "/api/chats/:chatId/approvals/:approvalId", {
      params: { chatId: ChatId, approvalId: ApprovalId },
      payload: ApprovalDecision,
      success: ApprovalAccepted.pipe(HttpApiSchema.status(202)),
      error: [...anyRouteErrors, ...bodyErrors, ChatNotFound, ApprovalNotFound, ApprovalDecided, DatabaseUnavailable, NotReady]
    }).annotateMerge(OpenApi.annotations({
      summary: "Decide a server tool call that waits for approval",
      description: "A turn that called a tool needing approval ended with the call pending (`pendingApprovals`, the " +
        "stream's `tool-approval-request`). The decision is recorded and the chat goes on as a turn of its own, " +
        "followed with `GET /api/chats/{chatId}/stream`: approved, the tool runs (at most once, whatever replica " +
        "runs the turn) and the model continues; denied, the model reads the error `denied by the user` (with the " +
        "reason). 409 `approval_decided` when it was decided already; 404 `approval_not_found` when the chat asks " +
        "for no such approval."
    })),
    HttpApiEndpoint.get("messages", "/api/chats/:chatId/messages", {
      params: { chatId: ChatId },
      success: ChatTranscript,
      error: [...anyRouteErrors, InvalidRequest, ChatNotFound, NotFound, DatabaseUnavailable, NotReady]
    }).annotateMerge(OpenApi.annotations({
      summary: "The persisted transcript of a chat",
      description: "Every message of the chat's turns, in order, as stored write-ahead."
    })),
    HttpApiEndpoint.get("uiMessages", "/api/chats/:chatId/ui-messages", {
      params: { chatId: ChatId },
      success: UiTranscript,
      error: [...anyRouteErrors, InvalidRequest, ChatNotFound, NotFound, DatabaseUnavailable, NotReady]
    }).annotateMerge(OpenApi.annotations({
      summary: "The transcript as the AI SDK's UIMessages",
      description: "The persisted transcript for the AI SDK's clients (`useChat`'s `messages`): text parts, tool parts " +
        "with their state (a tool message folded into the call it answers), steers with their `data-subagent-artifact` " +
        "part and `metadata.subagentResult`; each message's `metadata.timestamp` is its time (epoch ms)."
    })),
    HttpApiEndpoint.post("uiChat", "/api/ui/chat", {
      payload: UiChatRequest,
      success: UiMessageStream,
      error: [...turnErrors, ApprovalDecided]
    }).annotateMerge(OpenApi.annotations({
      summary: "A turn for the AI SDK's clients (useChat)",
      description: "`DefaultChatTransport`'s request: `id` is the chat, `messages` its UIMessages (those already " +
        "stored are skipped by id), `agent` and `context` may come as its `body` extras. Answers the streamed turn. A " +
        "client tool's call ends the stream at `tool-input-available`; the client adds the output and sends again. " +
        "A tool part in state `approval-responded` (`addToolApprovalResponse`) is the decision of that approval, and " +
        "the answer streams the continuation. " +
        "`trigger: \"regenerate-message\"` answers again after the stored transcript (it is append-only)."
    })),
    HttpApiEndpoint.get("uiFollow", "/api/ui/chat/:id/stream", {
      params: { id: ChatId },
      success: [UiMessageStream, HttpApiSchema.NoContent],
      error: [...anyRouteErrors, InvalidRequest, NotFound, DatabaseUnavailable, NotReady]
    }).annotateMerge(OpenApi.annotations({
      summary: "Resume the chat's running turn (the AI SDK's resume route)",
      description: "The same as `GET /api/chats/{chatId}/stream`, at the path `DefaultChatTransport` resumes from."
    })),
    HttpApiEndpoint.post("transcribe", "/api/media/transcriptions", {
      payload: TranscriptionUpload,
      success: Transcription,
      error: [...anyRouteErrors, ...bodyErrors, TooManyParts, ProviderFailed, ProviderNotConfigured, NotReady]
    }).annotateMerge(OpenApi.annotations({
      summary: "Transcribe a media file",
      description: "The server half of the `transcribe_video` tool: the uploaded file (multipart field `file`, " +
        "optional `language`) goes to the configured provider's transcription endpoint with the server's key."
    }))
  )
  .middleware(ChatAuth)
  .middleware(RequestErrors)
  .annotateMerge(OpenApi.annotations({
    description: "The agent session shell: one turn of the conversation, the persisted transcript, transcription. " +
      chatAuthRule
  }))
{}
