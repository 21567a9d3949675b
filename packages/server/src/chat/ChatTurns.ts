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
 *
 * The turn's agent (docs/agents.md) is resolved, and the context checked
 * against it, before anything is written: a refused turn stores nothing. A
 * chat keeps the agent of its first turn. The turn assumes the agent it names,
 * else the default, and its opening statement checks the assumption against
 * the chat's row: a chat of another agent answers which, nothing taken — the
 * turn then runs again as that agent's, or, when it named one, is refused
 * (409 `agent_mismatch`). The common turn (the default agent's chat) thus
 * costs no statement more than it did before agents.
 */
import type { AgentDefinition, ChatRequest, ChatResponse, TurnInFlight } from "@switchboard/domain"
import { AgentMismatch, AgentNotFound, ChatFull, ChatNotFound, claimsSubagentResult, InvalidRequest } from "@switchboard/domain"
import { Context, Effect, Layer } from "effect"
import type { ProviderError } from "@switchboard/providers"
import { checkContext } from "../agents/AgentCheck.ts"
import { Agents } from "../agents/Agents.ts"
import type { ChatKey } from "../users/ChatKey.ts"
import { chatIdOf, chatKey } from "../users/ChatKey.ts"
import { ChatRepo } from "./ChatRepo.ts"
import type { LiveTurn } from "./stream/LiveTurn.ts"
import { invokeAgent } from "../telemetry/GenAi.ts"
import { TurnComposer } from "./turn/TurnComposer.ts"
import { ChatApprovals, claimsApproval } from "./ChatApprovals.ts"

/**
 * Openings of one turn when its chat turns out another agent's: the second one runs as the chat's
 * agent, and only a chat deleted and created again as yet another agent's in between needs a third.
 */
const maxOpenings = 3

/**
 * A turn's request as the server runs it: its user's (whose budget its calls spend, whom its usage
 * is counted for), its chat, when it has one, as that user's (`ChatKey`).
 */
export type OwnedChatRequest = Omit<ChatRequest, "chatId"> & { readonly userId: string; readonly chatId?: ChatKey }

/** The request's chat taken as `userId`'s: the only way a client's `chatId` becomes a chat. */
export const ownedBy = (userId: string, request: ChatRequest): OwnedChatRequest => {
  const { chatId, ...rest } = request
  return chatId === undefined ? { ...rest, userId } : { ...rest, userId, chatId: chatKey(userId, chatId) }
}

export class ChatTurns extends Context.Service<ChatTurns, {
  /**
   * A chat the operator deleted while its turn ran still answers the turn (200, the provider's
   * answer): nothing of it is stored, no job dispatched, and the chat stays deleted.
   */
  run(
    request: OwnedChatRequest,
    /** The turn's stream (`TurnStreams`): followed, stopped, and the streamed answer's chunks. */
    live?: LiveTurn
  ): Effect.Effect<ChatResponse, TurnInFlight | ProviderError | AgentNotFound | AgentMismatch | ChatFull | InvalidRequest>
}>()("switchboard/server/chat/ChatTurns") {
  static readonly layerNoDeps = Layer.effect(ChatTurns, Effect.gen(function*() {
    const composer = yield* TurnComposer
    const agents = yield* Agents
    const repo = yield* ChatRepo
    const approvals = yield* ChatApprovals

    /** The agent and the context as it takes it, or the 404 / 400 that refuses the turn. */
    const resolve = (name: string, context: ChatRequest["context"]) =>
      Effect.gen(function*() {
        const agent = yield* agents.get(name)
        return { agent, context: yield* checkContext(agent, context) }
      })

    const persisted = (
      request: OwnedChatRequest,
      chatId: ChatKey,
      first: { agent: AgentDefinition; context: ChatRequest["context"] },
      live: LiveTurn | undefined
    ) =>
      Effect.gen(function*() {
        let turn = first
        for (let opening = 1;; opening++) {
          const outcome = yield* composer.persisted({
            chatId,
            messages: request.messages,
            context: turn.context,
            agent: turn.agent,
            ...(approvals.supersede === undefined ? {} : { resume: approvals.supersede(chatId) }),
            ...(live === undefined ? {} : { live })
          })
          switch (outcome._tag) {
            // A client turn has no guard, so it is always answered (stored, or not: its chat was deleted).
            case "Answered":
            case "ChatGone":
              return outcome.response
            case "OtherAgent":
              if (request.agent !== undefined || opening >= maxOpenings) {
                return yield* new AgentMismatch({
                  error: `Chat "${chatIdOf(chatId)}" is the agent "${outcome.agent}"'s` +
                    (request.agent === undefined ? "" : `, not "${request.agent}"`) +
                    ": a chat keeps the agent of its first turn",
                  agent: outcome.agent
                })
              }
              turn = yield* resolve(outcome.agent, request.context)
              continue
            case "Full":
              return yield* new ChatFull({
                error: `Chat "${chatIdOf(chatId)}" holds ${outcome.messages} messages (${outcome.bytes} bytes): at its limit ` +
                  "(CHAT_TRANSCRIPT_MAX_MESSAGES, CHAT_TRANSCRIPT_MAX_BYTES) it takes no more turns; start another chat",
                chatId: chatIdOf(chatId),
                messages: outcome.messages,
                bytes: outcome.bytes
              })
            default:
              return yield* Effect.die("a client turn was not answered")
          }
        }
      }).pipe(
        // Only a guarded turn (a wake) fails so: it found its chat gone before anything was written.
        Effect.catchIf((e) => e instanceof ChatNotFound, (e) => Effect.die(e))
      )

    /**
     * A turn naming no agent assumes the default; when the default refuses it (no such agent, or
     * the context is not its), the chat's own agent, if another, is the one to ask.
     */
    const assumed = (request: OwnedChatRequest) => {
      const first = resolve(request.agent ?? agents.defaultName, request.context)
      const { chatId } = request
      if (request.agent !== undefined || chatId === undefined) return first
      return first.pipe(Effect.catch((refused) =>
        repo.agentOf(chatId).pipe(Effect.flatMap((kept) =>
          kept === undefined || kept === agents.defaultName ? Effect.fail(refused) : resolve(kept, request.context)
        ))
      ))
    }

    /**
     * A client turn's messages claiming to be a sub-agent's result must be ones the transcript holds
     * (a client sending its history back): a new one would pass for a result the server never had,
     * and its id would stop the real one's delivery. Looked up only when some message claims so.
     */
    const forgedResult = (request: OwnedChatRequest) =>
      Effect.gen(function*() {
        const claims = request.messages.flatMap((message, index) =>
          claimsSubagentResult(message) || claimsApproval(message) ? [{ message, index }] : []
        )
        if (claims.length === 0 || request.chatId === undefined) return
        const stored = yield* repo.storedIds(request.chatId, claims.map(({ message }) => message.id))
        const forged = claims.find(({ message }) => !stored.has(message.id))
        if (forged === undefined) return
        return yield* new InvalidRequest({
          error: `Invalid request body: messages[${forged.index}] claims to be a sub-agent's result (id "steer_…", ` +
            "metadata.subagentResult or a data-subagent-artifact part) or an approval's (id \"approval_…\", " +
            "metadata.approvals or metadata.approval), which only the server writes; send back only the ones it stored"
        })
      })

    return ChatTurns.of({
      run: (request, live) =>
        forgedResult(request).pipe(
          Effect.andThen(assumed(request)),
          Effect.flatMap((turn) =>
            request.chatId === undefined
              ? composer.unpersisted(request.messages, turn.context, turn.agent, live)
              : persisted(request, request.chatId, turn, live)
          ),
          invokeAgent({ kind: "chat", agent: request.agent ?? agents.defaultName, userId: request.userId, chatId: request.chatId })
        )
    })
  }))
}
