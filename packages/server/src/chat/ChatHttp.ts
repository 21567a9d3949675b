/**
 * Handlers of the chat group: thin, they translate service results to the
 * wire errors of docs/errors.md. Provider failures are logged here, once, with
 * the (already redacted) cause; the client only ever sees the fixed 502 body.
 */
import {
  Api,
  approvalResponsesOf,
  fromUiMessages,
  maxStoredValueBytes,
  PayloadTooLarge,
  toUiMessages,
  TooManyMessages,
  UI_STREAM_HEADERS,
  wantsEventStream
} from "@switchboard/domain"
import { ApprovalDecided, ChatNotFound, CurrentUser, SSE_DONE, sseEvent } from "@switchboard/domain"
import type { ChatMessage, ChatRequest, UiChatRequest } from "@switchboard/domain"
import { Clock, Effect, Exit, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import type { HttpServerRequest } from "effect/http"
import { Readable } from "node:stream"
import { HttpApiBuilder } from "effect/http-api"
import { toWireError, Transcriber } from "@switchboard/providers"
import { ChatRepo } from "./ChatRepo.ts"
import { MaxMessagesSetting } from "./ChatSettings.ts"
import { chatKey } from "../users/ChatKey.ts"
import type { ChatKey } from "../users/ChatKey.ts"
import { ChatTurns, ownedBy } from "./ChatTurns.ts"
import type { OwnedChatRequest } from "./ChatTurns.ts"
import { eventsReadable, stopTurn } from "./stream/LiveTurn.ts"
import type { LiveTurn } from "./stream/LiveTurn.ts"
import { isServerMessageId } from "./MessageIds.ts"
import { TurnStreams } from "./stream/TurnStreams.ts"
import { firstOversized, storedBytes } from "../db/StoredSize.ts"
import { Admission } from "../limits/Admission.ts"
import { UserBudgets } from "../usage/UserBudgets.ts"
import { RateLimits } from "../limits/RateLimits.ts"
import { readUpload } from "./TranscriptionUpload.ts"
import { ChatApprovals, claimsApproval } from "./ChatApprovals.ts"

/**
 * Whether a body may hold a value larger than one stored value: only a larger body can, so smaller
 * requests (almost all) skip the measuring; a body of unknown length (chunked) is measured.
 */
const mayHoldOversized = (contentLength: string | undefined): boolean => {
  const length = Number(contentLength ?? "")
  return contentLength === undefined || !Number.isFinite(length) || length > maxStoredValueBytes
}

/** A persisted turn's message the transcript could not hold, as a 413 naming it. */
const oversizedMessage = (payload: ChatRequest): PayloadTooLarge | undefined => {
  if (payload.chatId === undefined) return undefined
  const found = firstOversized(payload.messages)
  return found === undefined ? undefined : new PayloadTooLarge({
    error: `Request body too large at messages[${found.index}]: ${found.bytes} bytes of JSON; ` +
      `a stored message holds at most ${maxStoredValueBytes}`
  })
}

/**
 * A context the turn's jobs could not store, as a 413: each sub-agent job the turn starts keeps the
 * turn's context, and a row over what a stored value may be could not be read back (every claim of
 * it would fail). Only a turn with a chat stores anything.
 */
const oversizedContext = (payload: ChatRequest): PayloadTooLarge | undefined => {
  if (payload.chatId === undefined || payload.context === undefined) return undefined
  const bytes = storedBytes(payload.context)
  return bytes <= maxStoredValueBytes ? undefined : new PayloadTooLarge({
    error: `Request body too large at context: ${bytes} bytes of JSON; a turn's context is stored with its jobs, at most ${maxStoredValueBytes}`
  })
}

/** A page of `GET /api/chats` when the caller names no `limit`. */
const DEFAULT_PAGE = 50

const streamOptions = { headers: UI_STREAM_HEADERS, contentType: UI_STREAM_HEADERS["content-type"]! }

/** A streamed body's response (docs/streaming.md): pulled by the socket, so a slow reader holds nothing. */
export const eventStreamResponse = (events: Stream.Stream<string> | Readable): HttpServerResponse.HttpServerResponse =>
  events instanceof Readable
    ? HttpServerResponse.raw(events, streamOptions)
    : HttpServerResponse.stream(Stream.encodeText(events), streamOptions)

/**
 * `POST /api/ui/chat`'s body as a turn. The AI SDK's clients send their whole history each time:
 * what the transcript holds already is left out here (by id, and a tool result for a call the
 * transcript has answered, whatever its id), so a long chat is not refused for its length and no
 * result is stored twice.
 */
const fromUiRequest = (repo: ChatRepo["Service"], userId: string, payload: UiChatRequest) =>
  Effect.gen(function*() {
    const stored = yield* repo.transcript(chatKey(userId, payload.id)).pipe(Effect.orElseSucceed((): ReadonlyArray<ChatMessage> => []))
    const ids = new Set(stored.map((m) => m.id))
    const answered = new Set(stored.flatMap((m) => m.toolResult === undefined ? [] : [m.toolResult.toolCallId]))
    const messages = fromUiMessages(payload.messages, yield* Clock.currentTimeMillis).filter((m) =>
      !ids.has(m.id) && (m.toolResult === undefined || !answered.has(m.toolResult.toolCallId)) &&
      // An answer the server announced and never stored (its turn failed after its stream began):
      // the client's copy of what streamed before the failure is not the transcript's to keep.
      !(m.role === "assistant" && isServerMessageId(m.id))
    )
    return {
      chatId: payload.id,
      messages,
      ...(payload.agent === undefined ? {} : { agent: payload.agent }),
      ...(payload.context === undefined ? {} : { context: payload.context })
    } satisfies ChatRequest as ChatRequest
  })

export const ChatHttp = HttpApiBuilder.group(Api, "chat", Effect.fn(function*(handlers) {
  const turns = yield* ChatTurns
  const repo = yield* ChatRepo
  const transcriber = yield* Transcriber
  const maxMessages = yield* MaxMessagesSetting.config
  const streams = yield* TurnStreams
  const limits = yield* RateLimits
  const admission = yield* Admission
  const budgets = yield* UserBudgets
  const approvals = yield* ChatApprovals

  /**
   * A turn past its caller's limits: `CHAT_RPM` (per user when vouched for), then the user's daily
   * budget — both refused before anything is stored or any provider is called.
   */
  const limited = <A, E, R>(request: HttpServerRequest.HttpServerRequest, user: CurrentUser["Service"], turn: Effect.Effect<A, E, R>) =>
    limits.chatTurn(request, user, Effect.andThen(budgets.check(user.userId), turn))

  /** The request's bounds, checked before anything runs: the 400/413 that refuse it whole. */
  const admitted = (payload: ChatRequest, contentLength: string | undefined): TooManyMessages | PayloadTooLarge | undefined => {
    if (payload.messages.length > maxMessages) {
      return new TooManyMessages({
        error: `Invalid request body: ${payload.messages.length} messages at messages; at most ${maxMessages} per request ` +
          "(CHAT_MAX_MESSAGES). With a chatId, send only the messages the server has not stored yet",
        limit: maxMessages
      })
    }
    return mayHoldOversized(contentLength) ? oversizedMessage(payload) ?? oversizedContext(payload) : undefined
  }

  /** The streamed turn: its 200 once the provider answers, the JSON error of a failure before that. */
  const streamed = (payload: OwnedChatRequest, run: (live: LiveTurn) => ReturnType<typeof turns.run>, announce?: string) =>
    streams.start(payload.chatId, run, announce).pipe(
      Effect.catchTag("ProviderError", toWireError),
      Effect.map((live) => {
        const body = eventsReadable(live)
        // A turn with a chat outlives its reader (it is stored, followed, stopped); one without has
        // no other reader and nothing to store: it ends with its connection, the provider's too.
        if (payload.chatId === undefined) body.once("close", () => live.ended || stopTurn(live))
        // The handler answers the stream itself (an HttpServerResponse passes through the API's encoding).
        return eventStreamResponse(body) as never
      })
    )

  /**
   * A streamed turn in a place of its own (`Admission`), taken before anything else and refused at
   * once when none is left. The turn outlives its request, so once it runs the place is the turn's
   * to give back when it ends; a turn that never ran (refused, failed to start) gives it back here.
   */
  const admittedStream = (
    request: HttpServerRequest.HttpServerRequest,
    user: CurrentUser["Service"],
    payload: OwnedChatRequest,
    announce?: string
  ) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(admission.enterTurn, (place) => {
        let ran = false
        const run = (live: LiveTurn) => {
          ran = true
          return turns.run(payload, live).pipe(Effect.ensuring(place.release))
        }
        return restore(limited(request, user, streamed(payload, run, announce))).pipe(
          Effect.onExit((exit) => Exit.isFailure(exit) && !ran ? place.release : Effect.void)
        )
      })
    )

  /** The caller's chat of that id (`ChatKey.ts`): whoever asks, only their own. */
  const own = (chatId: string) => Effect.map(CurrentUser, ({ userId }) => chatKey(userId, chatId))

  const follow = (chatId: ChatKey) =>
    streams.follow(chatId).pipe(
      Effect.map((events) => events === undefined ? HttpServerResponse.empty({ status: 204 }) as never : eventStreamResponse(events) as never)
    )

  return handlers.handleAll({
    chat: Effect.fn(function*({ payload, request }) {
      const refused = admitted(payload, request.headers["content-length"])
      if (refused !== undefined) return yield* refused
      const user = yield* CurrentUser
      const owned = ownedBy(user.userId, payload)
      if (wantsEventStream(request.headers.accept)) return yield* admittedStream(request, user, owned)
      // Without a chat there is nothing to follow or stop: the plain call, as ever.
      const turn = owned.chatId === undefined ? turns.run(owned) : streams.run(owned.chatId, false, (live) => turns.run(owned, live))
      return yield* admission.turn(limited(request, user, turn.pipe(Effect.catchTag("ProviderError", toWireError))))
    }),
    list: Effect.fn(function*({ query }) {
      const { userId } = yield* CurrentUser
      return yield* repo.list(userId, query.limit ?? DEFAULT_PAGE, query.before)
    }),
    remove: Effect.fn(function*({ params }) {
      const key = yield* own(params.chatId)
      if (!(yield* repo.remove(key))) {
        return yield* new ChatNotFound({ error: `No chat with id "${params.chatId}"`, chatId: params.chatId })
      }
      yield* Effect.logInfo("chat deleted by its user, with its transcript, jobs and markers").pipe(Effect.annotateLogs({ chatId: key }))
      return HttpServerResponse.empty({ status: 204 }) as never
    }),
    follow: ({ params }) => Effect.flatMap(own(params.chatId), follow),
    stop: ({ params }) => own(params.chatId).pipe(Effect.flatMap(streams.stop), Effect.map((stopped) => ({ stopped }))),
    decide: Effect.fn(function*({ params, payload }) {
      const key = yield* own(params.chatId)
      yield* approvals.decide(key, params.approvalId, payload)
      return { accepted: true } as const
    }),
    uiChat: Effect.fn(function*({ payload, request }) {
      const user = yield* CurrentUser
      // `addToolApprovalResponse`'s request: the decisions it carries, and their continuation streamed.
      const chatRequest = yield* fromUiRequest(repo, user.userId, payload)
      const refused = admitted(chatRequest, request.headers["content-length"])
      if (refused !== undefined) return yield* refused
      // `addToolApprovalResponse`'s request: the decisions it carries, and their continuation streamed
      // (the client's own results of the same round, when it sends some, stored first).
      const responses = approvalResponsesOf(payload.messages.slice(-1))
      if (responses.length > 0) {
        const key = chatKey(user.userId, payload.id)
        const results = chatRequest.messages.filter((m) => m.role === "tool" && !claimsApproval(m))
        const continuation = yield* approvals.responded(key, responses, results)
        const last = payload.messages[payload.messages.length - 1]
        if (continuation === "jobs") {
          // Only sub-agent jobs' calls: they go on in the background. The chat's running turn, when there is
          // one, is what there is to follow; else the answer is a stream that starts and ends.
          const running = yield* streams.follow(key)
          return eventStreamResponse(running ?? Stream.make(sseEvent({ type: "start", messageId: last?.id ?? "" }), sseEvent({ type: "finish" }), SSE_DONE)) as never
        }
        if (continuation !== undefined) {
          const live = yield* streams.start(key, continuation, last?.id).pipe(Effect.catchTag("ProviderError", toWireError))
          return eventStreamResponse(eventsReadable(live)) as never
        }
        // Decided already (another tab, a retry): the chat's running turn, when there is one, is its continuation.
        const running = yield* streams.follow(key)
        if (running !== undefined) return eventStreamResponse(running) as never
        if (chatRequest.messages.length === 0) {
          return yield* new ApprovalDecided({
            error: `Approval "${responses[0]!.approvalId}" was decided already: the first decision holds`,
            approvalId: responses[0]!.approvalId
          })
        }
      }
      const last = payload.messages[payload.messages.length - 1]
      return yield* admittedStream(request, user, ownedBy(user.userId, chatRequest), last?.role === "assistant" ? last.id : undefined)
    }),
    uiFollow: ({ params }) => Effect.flatMap(own(params.id), follow),
    uiMessages: ({ params }) =>
      own(params.chatId).pipe(Effect.flatMap(repo.transcript), Effect.map((messages) => ({ messages: toUiMessages(messages) }))),
    messages: ({ params }) => own(params.chatId).pipe(Effect.flatMap(repo.transcript), Effect.map((messages) => ({ messages }))),
    transcribe: Effect.fn(function*({ payload }) {
      const upload = yield* readUpload(payload)
      const text = yield* transcriber.transcribe(upload).pipe(Effect.catchTag("ProviderError", toWireError))
      return { text }
    })
  })
}))
