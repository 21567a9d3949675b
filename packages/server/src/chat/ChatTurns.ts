/**
 * One turn of the agent session shell, as the chat route asks for it:
 * without `chatId` a plain provider call (nothing stored, client tools only);
 * with `chatId` a persisted turn through the `TurnComposer` — write-ahead
 * under the chat's in-flight marker, the transcript as the conversation, the
 * job tools executed server-side.
 *
 * Write-ahead means the incoming messages are stored before the provider is
 * called, so a provider failure, a crash or a client hanging up loses nothing
 * the user sent once the turn was accepted.
 */
import type { ChatRequest, ChatResponse, TurnInFlight } from "@switchboard/domain"
import { ChatNotFound } from "@switchboard/domain"
import { Context, Effect, Layer } from "effect"
import type { ProviderError } from "@switchboard/providers/ProviderAdapter"
import { TurnComposer } from "./TurnComposer.ts"

export class ChatTurns extends Context.Service<ChatTurns, {
  /**
   * A chat the operator deleted while its turn ran still answers the turn (200, the provider's
   * answer): nothing of it is stored, no job dispatched, and the chat stays deleted.
   */
  run(request: ChatRequest): Effect.Effect<ChatResponse, TurnInFlight | ProviderError>
}>()("switchboard/server/chat/ChatTurns") {
  static readonly layerNoDeps = Layer.effect(ChatTurns, Effect.gen(function*() {
    const composer = yield* TurnComposer
    return ChatTurns.of({
      run: (request) =>
        request.chatId === undefined
          ? composer.unpersisted(request.messages, request.context)
          : composer.persisted({ chatId: request.chatId, messages: request.messages, context: request.context }).pipe(
            // A client turn has no guard, so it is always answered (stored, or not: its chat was deleted).
            Effect.flatMap((outcome) =>
              outcome._tag === "Answered" || outcome._tag === "ChatGone"
                ? Effect.succeed(outcome.response)
                : Effect.die("a client turn was not answered")
            ),
            // Only a guarded turn (a wake) fails so: it found its chat gone before anything was written.
            Effect.catchIf((e) => e instanceof ChatNotFound, (e) => Effect.die(e))
          )
    })
  }))
}
