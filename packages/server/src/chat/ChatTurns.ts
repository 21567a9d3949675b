/**
 * One turn of the agent session shell: assemble the system prompt and the tool
 * schemas, call the provider adapter, and — with a `chatId` — persist the turn
 * write-ahead under the chat's in-flight marker.
 *
 * Write-ahead means the incoming messages are stored before the provider is
 * called, so a provider failure, a crash or a client hanging up loses nothing
 * the user sent once the turn was accepted.
 */
import type { ChatMessage, ChatRequest, ChatResponse, ToolSchema } from "@switchboard/domain"
import { clientToolSchemas, TurnInFlight } from "@switchboard/domain"
import { Clock, Config, Context, Duration, Effect, Exit, Layer } from "effect"
import { randomUUID } from "node:crypto"
import type { ProviderError } from "../llm/ProviderAdapter.ts"
import { ProviderAdapter } from "../llm/ProviderAdapter.ts"
import { ChatRepo } from "./ChatRepo.ts"
import { buildSystemPrompt } from "./SystemPrompt.ts"

export class ChatTurns extends Context.Service<ChatTurns, {
  run(request: ChatRequest): Effect.Effect<ChatResponse, TurnInFlight | ProviderError>
}>()("switchboard/server/chat/ChatTurns") {
  static readonly layerNoDeps = Layer.effect(ChatTurns, Effect.gen(function*() {
    const adapter = yield* ProviderAdapter
    const repo = yield* ChatRepo
    // The marker must outlive the longest provider call, or a slow turn could be overtaken.
    // An invalid value is the provider's to report (502 provider_not_configured), not a reason to refuse to start.
    const providerTimeout = yield* Config.Int("LLM_TIMEOUT_MS").pipe(
      Config.withDefault(60_000),
      Effect.orElseSucceed(() => 60_000)
    )
    const markerTtl = Duration.millis(providerTimeout + 30_000)

    const callProvider = Effect.fn("ChatTurns.callProvider")(function*(request: ChatRequest) {
      const toolSchemas: ReadonlyArray<ToolSchema> = clientToolSchemas
      const answer = yield* adapter.chat({
        messages: request.messages,
        systemPrompt: buildSystemPrompt(request.context),
        toolSchemas
      })
      const now = yield* Clock.currentTimeMillis
      const assistant: ChatMessage = {
        id: `msg_${randomUUID()}`,
        role: "assistant",
        content: answer.content,
        ...(answer.toolCalls && answer.toolCalls.length > 0 ? { toolCalls: answer.toolCalls } : {}),
        timestamp: now
      }
      return assistant
    })

    const respond = (assistant: ChatMessage): ChatResponse => ({
      content: assistant.content,
      ...(assistant.toolCalls ? { toolCalls: assistant.toolCalls } : {}),
      messageId: assistant.id
    })

    /**
     * Accepting a turn = taking the chat's marker and storing the request's messages (write-ahead),
     * in one statement for an ordinary turn. It runs uninterruptibly as the acquisition below, so a
     * client that hangs up at any moment either never got the marker, or has its messages stored
     * and the marker released: no instant at which the marker is held but owned by no release.
     * (A big turn's later batches are further statements: if one fails, the marker goes too.)
     */
    const acceptTurn = (chatId: string, turnId: string, request: ChatRequest) =>
      repo.beginTurn(chatId, turnId, markerTtl, request.messages).pipe(
        Effect.onError(() => repo.endTurn(chatId, turnId))
      )

    // A client that goes away interrupts the turn (the provider call is aborted, no answer is
    // stored) and the release frees the chat at once: it never costs more than the turn itself.
    // The next turn re-sends its history and gets the answer then.
    const persistedTurn = Effect.fn("ChatTurns.persistedTurn")(function*(chatId: string, request: ChatRequest) {
      const turnId = randomUUID()
      // Two round trips per ordinary turn: marker + the request's messages, then the answer + the marker's release.
      return yield* Effect.acquireUseRelease(
        acceptTurn(chatId, turnId, request),
        (accepted): Effect.Effect<ChatResponse, TurnInFlight | ProviderError> =>
          accepted
            ? callProvider(request).pipe(
              Effect.flatMap((assistant) => repo.endTurn(chatId, turnId, [assistant]).pipe(Effect.as(respond(assistant))))
            )
            : Effect.fail(new TurnInFlight({ error: `A turn for chat "${chatId}" is already in flight`, chatId })),
        // Failed or interrupted (the answer not stored): the marker is released all the same.
        (accepted, exit) => accepted && !Exit.isSuccess(exit) ? repo.endTurn(chatId, turnId) : Effect.void
      )
    })

    return ChatTurns.of({
      run: (request) =>
        request.chatId === undefined
          ? callProvider(request).pipe(Effect.map(respond))
          : persistedTurn(request.chatId, request)
    })
  }))

  static readonly layer = this.layerNoDeps.pipe(Layer.provide(ChatRepo.layer))
}
