/**
 * One turn of the agent session shell: assemble the system prompt and the tool
 * schemas, call the provider adapter, and — with a `chatId` — persist the turn
 * write-ahead under the chat's in-flight marker.
 *
 * Write-ahead means the incoming messages are stored before the provider is
 * called, so a provider failure or a crash loses nothing the user sent.
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

    const persistedTurn = Effect.fn("ChatTurns.persistedTurn")(function*(chatId: string, request: ChatRequest) {
      const turnId = randomUUID()
      // Two round trips per turn: marker + the request's messages, then the answer + the marker's release.
      if (!(yield* repo.beginTurn(chatId, turnId, markerTtl, request.messages))) {
        return yield* new TurnInFlight({ error: `A turn for chat "${chatId}" is already in flight`, chatId })
      }
      return yield* callProvider(request).pipe(
        Effect.flatMap((assistant) => repo.endTurn(chatId, turnId, [assistant]).pipe(Effect.as(respond(assistant)))),
        // Failed or interrupted (the answer not stored): the marker is released all the same.
        Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : repo.endTurn(chatId, turnId))
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
