/**
 * A turn's first stage: accepting it — the chat's marker taken, the
 * transcript read, the guard's look, the request's new messages stored
 * write-ahead (`TurnOpenings`, one statement for a client's turn).
 */
import type { ChatMessage } from "@switchboard/domain"
import type { Duration } from "effect"
import { Effect } from "effect"
import type { ChatRepo } from "../ChatRepo.ts"
import type { TurnGuard, TurnInput } from "./TurnTypes.ts"
import { chatGone, unstored } from "./TurnTypes.ts"

/**
 * Accepting a turn: taking the chat's marker, reading the transcript, the guard's look, and the
 * write-ahead append of the new messages. It runs uninterruptibly (the composer acquires with it), so a
 * client that hangs up at any moment either never got the marker or leaves its messages stored
 * and the marker released: the marker is never held without a release that owns it.
 */
export const makeAccept = (repo: ChatRepo["Service"], markerTtl: Duration.Duration) => (input: TurnInput, turnId: string) =>
  Effect.gen(function*() {
    const { chatId, guard } = input
    if (guard === undefined) {
      // A client turn: the marker, the stored transcript and the write-ahead append (ids already
      // stored are left as they were) in one statement (a large request's further batches right
      // after); the conversation is the transcript and then what was new in the request.
      const opened = yield* repo.openTurn(chatId, turnId, markerTtl, { _tag: "Agent", messages: input.messages, agent: input.agent.name })
      if (opened._tag === "Held") return undefined
      if (opened._tag === "OtherAgent") return { otherAgent: opened.agent }
      if (opened._tag === "Full") return { full: { messages: opened.messages, bytes: opened.bytes } }
      const stored = opened.transcript
      return {
        decision: "proceed" as TurnGuard,
        conversation: [...stored, ...unstored(stored, input.messages)],
        generation: opened.generation
      }
    }
    // A guarded turn (a wake) looks at the transcript before anything is written.
    const guarded = (transcript: ReadonlyArray<ChatMessage>, generation: string | undefined) =>
      Effect.gen(function*() {
        const decision = guard(transcript)
        const fresh = decision !== "proceed" ? [] : unstored(transcript, input.messages)
        if (!(yield* repo.append(chatId, fresh, generation))) return yield* chatGone(chatId)
        return { decision, conversation: [...transcript, ...fresh], generation }
      })
    const known = input.known
    if (known === undefined) {
      const opened = yield* repo.openTurn(chatId, turnId, markerTtl, { _tag: "Reading" })
      if (opened === undefined) return undefined
      // Deleted since the caller knew of it (a continuation racing the user's delete): not made anew.
      if (opened === "gone") return yield* chatGone(chatId)
      return yield* guarded(opened.transcript, opened.generation).pipe(Effect.onError(() => repo.endTurn(chatId, turnId)))
    }
    // The caller looked already: the guard decides on that look, and the marker, the check that
    // nothing was stored since and the write-ahead append are one statement.
    const decision = guard(known)
    const fresh = decision !== "proceed" ? [] : unstored(known, input.messages)
    const { generation } = input
    const unchanged = yield* repo.openTurn(chatId, turnId, markerTtl, { _tag: "Unchanged", known: known.length, messages: fresh, generation })
    if (unchanged === undefined) return undefined
    // Deleted since the look (a wake racing the operator): nothing taken, nothing stored.
    if (unchanged === "gone") return yield* chatGone(chatId)
    if (unchanged) return { decision, conversation: [...known, ...fresh], generation }
    // Something was stored since the look (and nothing of this turn's): look again, under the marker.
    return yield* repo.transcript(chatId).pipe(
      Effect.orElseSucceed((): ReadonlyArray<ChatMessage> => []),
      Effect.flatMap((transcript) => guarded(transcript, generation)),
      Effect.onError(() => repo.endTurn(chatId, turnId))
    )
  })
