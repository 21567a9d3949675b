/**
 * The composition of one persisted turn — the one code path shared by a
 * client's request (`POST /api/agent/chat` with `chatId`) and a server-side
 * wake turn delivering a sub-agent's steer:
 *
 * 1. take the chat's in-flight marker (else `TurnInFlight`, the 409);
 * 2. read the stored transcript; a `guard` may look at it first (a wake defers
 *    behind an unanswered client call, or finds its steer already answered);
 * 3. store the request's messages that are not stored yet (by id), write-ahead;
 * 4. call the provider with the transcript *as the conversation* (the stored
 *    messages, steers and wake answers included, then the new ones), offering
 *    the client tools and the server tools (`ServerTools`: the job tools, in
 *    a server with jobs);
 * 5. execute the server tool calls of the answer through the port — their
 *    results (a job's acknowledgement) and their writes (a job's record)
 *    stored in one statement with the assistant message — and call the
 *    provider again, until an answer without server tool calls (or with
 *    client calls, which are the client's to execute) or `maxServerToolRounds`;
 * 6. store the final answer and release the marker, with the server tools'
 *    writes of a turn's end (a wake's job settled by the same statement). An
 *    answer larger than a stored message can hold fails the turn as a
 *    provider failure (`TooLarge`), nothing of it stored.
 *
 * A chat the operator deletes while its turn runs stays deleted: each of the
 * turn's writes goes only to a chat that still exists. The first one that
 * finds it gone ends the turn (`ChatGone`) with the answer it was storing —
 * a client still gets its 200, the chat route's contract has no other
 * answer for it — and nothing stored, no job dispatched.
 *
 * Server tool calls never reach the client: the answer's `toolCalls` are the
 * client calls only. An answer mixing both is stored as it came (one assistant
 * message with every call) followed by the server tools' results, so the
 * client's continuation (its own copy of the message, deduplicated by id, then
 * its tool results) makes a valid provider conversation.
 *
 * The stages, each in a module of this folder: `TurnOpen` (1–3: accepting the
 * turn, through `TurnOpenings`' one statement), `TurnRounds` (4–6: the rounds
 * and the end), `StreamRound` (what a streamed turn's readers see), `Offer`
 * (what the agent offers the provider). This module runs them in order, the
 * release of the marker guaranteed whatever ends the turn.
 */
import type { AgentDefinition, ChatMessage, ChatResponse, JsonObject, ProviderChatParams } from "@switchboard/domain"
import { ChatNotFound, traced, TurnInFlight } from "@switchboard/domain"
import { Context, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { ProviderAdapter, ProviderError } from "@switchboard/providers"
import { ChatRepo } from "../ChatRepo.ts"
import { TurnMarkerGraceMsSetting } from "../ChatSettings.ts"
import { LlmTimeoutMsSetting } from "../ProviderSettings.ts"
import { ServerTools } from "../ServerTools.ts"
import type { LiveTurn } from "../stream/LiveTurn.ts"
import { publish } from "../stream/LiveTurn.ts"
import { chatIdOf } from "../../users/ChatKey.ts"
import { offerOf } from "./Offer.ts"
import { endLive, streamRound } from "./StreamRound.ts"
import { makeAccept } from "./TurnOpen.ts"
import { makeRounds } from "./TurnRounds.ts"
import type { TurnEnd, TurnInput, TurnOutcome } from "./TurnTypes.ts"
import { assistantMessage, ended, respond } from "./TurnTypes.ts"

export type { TurnGuard, TurnInput, TurnOutcome } from "./TurnTypes.ts"
export { maxServerToolRounds } from "./TurnTypes.ts"

export class TurnComposer extends Context.Service<TurnComposer, {
  /** A turn without `chatId`: nothing stored, no server tools. */
  unpersisted(
    messages: ReadonlyArray<ChatMessage>,
    context: JsonObject | undefined,
    agent: AgentDefinition,
    live?: LiveTurn
  ): Effect.Effect<ChatResponse, ProviderError>
  persisted(input: TurnInput): Effect.Effect<TurnOutcome, TurnInFlight | ChatNotFound | ProviderError>
  /** How long a turn's marker lives: longer than the longest provider call. */
  readonly markerTtl: Duration.Duration
}>()("switchboard/server/chat/TurnComposer") {
  static readonly layerNoDeps = Layer.effect(TurnComposer, Effect.gen(function*() {
    const adapter = yield* ProviderAdapter
    const repo = yield* ChatRepo
    const tools = yield* ServerTools
    const sql = yield* SqlClient.SqlClient
    // The marker must outlive the longest provider call, or a slow turn could be overtaken.
    const providerTimeout = yield* LlmTimeoutMsSetting.config
    const grace = yield* TurnMarkerGraceMsSetting.config
    const markerTtl = Duration.millis(providerTimeout + Math.max(0, grace))

    const accept = makeAccept(repo, markerTtl)
    const rounds = makeRounds({ adapter, repo, tools, sql, markerTtl })

    const unpersisted = Effect.fnUntraced(function*(
      messages: ReadonlyArray<ChatMessage>,
      context: JsonObject | undefined,
      agent: AgentDefinition,
      live?: LiveTurn
    ) {
      const offer = yield* offerOf(agent, context, undefined)
      const params: ProviderChatParams = {
        messages,
        systemPrompt: offer.systemPrompt,
        toolSchemas: offer.clientTools,
        ...(offer.model === undefined ? {} : { model: offer.model })
      }
      if (live === undefined) {
        const answer = yield* adapter.chat(params)
        const calls = answer.toolCalls ?? []
        return respond(yield* assistantMessage(answer.content, calls), calls, [])
      }
      const end: TurnEnd = { ended: false, usage: undefined, stopped: false }
      return yield* Effect.gen(function*() {
        publish(live, { type: "start", messageId: live.announcedId })
        const answer = yield* streamRound(adapter, live, params, () => false, 1)
        publish(live, { type: "finish-step" })
        end.usage = answer.usage
        end.stopped = answer.stopped
        const calls = answer.toolCalls ?? []
        return respond(yield* assistantMessage(answer.content, calls, { id: live.messageId }), calls, [])
      }).pipe(Effect.onExit((exit) => Effect.sync(() => endLive(live, exit, undefined, end))))
    }, traced("TurnComposer.unpersisted"))

    // A client that goes away interrupts the turn (the provider call is aborted, nothing of an answer
    // is stored) and the release frees the chat at once.
    const persisted = Effect.fnUntraced(function*(input: TurnInput) {
      const { chatId, live } = input
      const turnId = randomUUID()
      const end: TurnEnd = { ended: false, usage: undefined, stopped: false }
      const turn = Effect.acquireUseRelease(
        accept(input, turnId).pipe(Effect.tap((accepted) =>
          Effect.sync(() => {
            if (live !== undefined && accepted !== undefined && "decision" in accepted) live.turnId = turnId
          })
        )),
        (accepted): Effect.Effect<TurnOutcome, TurnInFlight | ChatNotFound | ProviderError> => {
          if (accepted === undefined) {
            return Effect.fail(new TurnInFlight({ error: `A turn for chat "${chatIdOf(chatId)}" is already in flight`, chatId: chatIdOf(chatId) }))
          }
          if ("otherAgent" in accepted) return Effect.succeed({ _tag: "OtherAgent", agent: accepted.otherAgent })
          if ("full" in accepted) return Effect.succeed({ _tag: "Full", ...accepted.full })
          switch (accepted.decision) {
            case "defer":
              return Effect.succeed({ _tag: "Deferred" })
            case "skip": {
              // The tools' end writes (a wake's job settled) and the marker released in one statement.
              const turnEnd = tools.turnEnded(chatId, input.settles)
              return repo.turnEnded(chatId, turnId, turnEnd).pipe(
                Effect.flatMap(({ row }) => ended(end, turnEnd, row)),
                Effect.as({ _tag: "Skipped" } as const)
              )
            }
            case "proceed":
              return rounds(input, turnId, accepted.conversation, accepted.generation, end)
          }
        },
        (accepted) => {
          if (accepted === undefined || "otherAgent" in accepted || end.ended) return Effect.void
          // The marker released, with the tools' end writes (wakes that waited behind this turn due now).
          const turnEnd = tools.turnEnded(chatId, undefined)
          return repo.turnEnded(chatId, turnId, turnEnd).pipe(Effect.flatMap(({ row }) => turnEnd.after(row)))
        }
      )
      if (live === undefined) return yield* turn
      // The stream's last chunk once the turn's end is stored (or nothing was): readers that see
      // `finish` find the answer in the transcript.
      return yield* turn.pipe(Effect.onExit((exit) => Effect.sync(() => endLive(live, exit, chatId, end))))
    }, traced("TurnComposer.persisted"))

    return TurnComposer.of({ unpersisted, persisted, markerTtl })
  }))
}
