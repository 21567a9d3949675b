/**
 * Approvals (docs/tools.md): a server tool's call that needs a user's yes
 * stops the turn unanswered; the user's decision continues the chat as a turn
 * of its own, which any replica may run, and the tool runs at most once per
 * approval whatever races.
 *
 * - A decision is a row (`ApprovalsRepo.decide`): the primary key makes a
 *   second one a 409 on every replica. It is claimed, with a lease, by the
 *   replica that took it, which starts the continuation at once.
 * - The continuation is a guarded turn of the chat (`TurnComposer`, the
 *   chat's marker: one turn at a time) whose `resume` answers the decided
 *   calls before the provider is asked: a denial as the error `denied by the
 *   user`, an approval by running the tool (`ServerTools.execute`), after
 *   the row's state moved from `decided` to `running` — the one statement
 *   that lets a tool start, once. The answers are stored under ids of the
 *   approval's (`approval_<id>`), so one stored twice is one.
 * - A replica that dies leaves the lease to expire; another replica's sweep
 *   claims the decision and runs the continuation. A decision found
 *   `running` was started by a replica that died: it may or may not have
 *   run, and it is never run again — the model reads that it was
 *   interrupted.
 * - A chat busy with another turn defers the continuation (its lease moved a
 *   little); a client turn sent while approvals wait denies them first
 *   (`supersede`): the user went on without deciding.
 */
import type { AgentDefinition, ChatMessage, ToolCall } from "@switchboard/domain"
import {
  ApprovalDecided,
  ApprovalNotFound,
  approvalResultId,
  approvalsIn,
  ChatNotFound,
  deniedError,
  TurnInFlight,
  unansweredToolCalls
} from "@switchboard/domain"
import { Cause, Clock, Duration, Effect, FiberSet, Layer, Schedule } from "effect"
import { hostname } from "node:os"
import { randomUUID } from "node:crypto"
import { Agents } from "../agents/Agents.ts"
import { ChatApprovals } from "../chat/ChatApprovals.ts"
import type { ChatApprovalsShape } from "../chat/ChatApprovals.ts"
import { ChatRepo } from "../chat/ChatRepo.ts"
import { ServerTools } from "../chat/ServerTools.ts"
import type { LiveTurn } from "../chat/stream/LiveTurn.ts"
import { publish } from "../chat/stream/LiveTurn.ts"
import { TurnStreams } from "../chat/stream/TurnStreams.ts"
import { TurnComposer } from "../chat/turn/TurnComposer.ts"
import type { Resume } from "../chat/turn/TurnTypes.ts"
import { DatabaseGauges } from "../telemetry/DatabaseGauges.ts"
import { invokeAgent } from "../telemetry/GenAi.ts"
import type { ChatKey } from "../users/ChatKey.ts"
import { chatIdOf, userOf } from "../users/ChatKey.ts"
import type { ClaimedDecision } from "./ApprovalsRepo.ts"
import { ApprovalsRepo } from "./ApprovalsRepo.ts"
import { ParkedApprovals } from "./ParkedApprovals.ts"

/** How often a replica looks for continuations whose replica died or that wait to be retried. */
export const SWEEP_MS = 2_000
/** Continuations a sweep takes at once. */
const SWEEP_BATCH = 8
/** How long a continuation that found its chat busy waits before it is tried again. */
const BUSY_RETRY_MS = 1_000

/** What the model reads of a call whose replica died while it ran. */
export const INTERRUPTED =
  "the tool's run was interrupted (the server running it stopped): it may or may not have run, and it is not run again"

/** Why a call waiting for approval is denied when the user writes again instead of deciding. */
const SUPERSEDED = "the user sent a new message instead of deciding"

/** The tool message answering an approval's call: its id the approval's, its decision in `metadata.approval`. */
const answerOf = (
  approvalId: string,
  call: ToolCall,
  decision: { readonly approved: boolean; readonly reason?: string | undefined },
  result: { readonly result?: ChatMessage["toolResult"] } & Partial<ChatMessage>,
  now: number
): ChatMessage => {
  const toolResult = result.toolResult ?? { toolCallId: call.id, name: call.name, error: INTERRUPTED }
  return {
    id: approvalResultId(approvalId),
    role: "tool",
    content: result.content ?? toolResult.error ?? "",
    toolResult,
    metadata: { approval: { id: approvalId, approved: decision.approved, ...(decision.reason === undefined ? {} : { reason: decision.reason }) } },
    timestamp: now
  }
}

const denialOf = (approvalId: string, call: ToolCall, reason: string | undefined, now: number): ChatMessage => {
  const error = deniedError(reason)
  return answerOf(approvalId, call, { approved: false, reason }, {
    content: error,
    toolResult: { toolCallId: call.id, name: call.name, error }
  }, now)
}

/** A continuation's answers as its stream shows them: the call, its approval and decision, its output. */
const publishAnswer = (live: LiveTurn, approvalId: string, call: ToolCall, answer: ChatMessage) => {
  const decision = answer.metadata?.["approval"] as { approved: boolean; reason?: string }
  publish(live, { type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.args })
  publish(live, { type: "tool-approval-request", approvalId, toolCallId: call.id })
  publish(live, {
    type: "tool-approval-response",
    approvalId,
    approved: decision.approved,
    ...(decision.reason === undefined ? {} : { reason: decision.reason })
  })
  const result = answer.toolResult
  if (!decision.approved) return publish(live, { type: "tool-output-denied", toolCallId: call.id })
  publish(live, {
    type: "tool-output-available",
    toolCallId: call.id,
    output: result?.error !== undefined ? { error: result.error } : result?.result ?? null
  })
}

export const layer = Layer.effect(ChatApprovals, Effect.gen(function*() {
  const repo = yield* ApprovalsRepo
  const parked = yield* ParkedApprovals
  const composer = yield* TurnComposer
  const streams = yield* TurnStreams
  const chats = yield* ChatRepo
  const agents = yield* Agents
  const tools = yield* ServerTools
  const owner = `approvals:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  // The continuation holds the chat's marker while it runs: its lease outlives the marker, so a
  // live continuation is never taken over, and a dead one is within two markers' time.
  const leaseMs = 2 * Duration.toMillis(composer.markerTtl)
  const background = yield* FiberSet.make<unknown, never>()

  /** The decided calls answered: denied, interrupted, or run (once: `start` lets one replica start it). */
  const resumeWith = (chatId: ChatKey, agent: AgentDefinition, claimed: ReadonlyArray<ClaimedDecision>): Resume => (conversation, live) =>
    Effect.gen(function*() {
      const decided = new Map(claimed.map((d) => [d.approvalId, d]))
      const answers: Array<ChatMessage> = []
      for (const asked of approvalsIn(conversation)) {
        const decision = decided.get(asked.approvalId)
        if (asked.answered || decision === undefined) continue
        const now = yield* Clock.currentTimeMillis
        let answer: ChatMessage
        if (!decision.approved) {
          answer = denialOf(asked.approvalId, asked.call, decision.reason, now)
        } else if (decision.state === "running") {
          answer = answerOf(asked.approvalId, asked.call, decision, {}, now)
        } else {
          // Moved to `running` first: a replica that dies from here on never runs it again.
          if (!(yield* repo.start(chatId, asked.approvalId, owner))) continue
          const executed = yield* tools.execute({ chatId, context: undefined, agent, conversation }, [asked.call])
          answer = answerOf(asked.approvalId, asked.call, decision, executed.results[0] ?? {}, now)
        }
        answers.push(answer)
        if (live !== undefined) publishAnswer(live, asked.approvalId, asked.call, answer)
      }
      const after = [...conversation, ...answers]
      // The model is asked once every call of the chat is answered, and only if it has not
      // answered these already (a continuation that died after its model's answer was stored).
      const ours = new Set(claimed.map((d) => approvalResultId(d.approvalId)))
      const lastOurs = after.findLastIndex((m) => ours.has(m.id))
      const answeredSince = lastOurs >= 0 && after.slice(lastOurs + 1).some((m) => m.role === "assistant")
      return { messages: answers, ask: lastOurs >= 0 && !answeredSince && unansweredToolCalls(after).length === 0 }
    })

  /**
   * The chat's continuation: its decisions claimed, the turn run on `live`'s stream. `undefined`
   * when there is nothing of it to claim (another replica has it, or it is finished).
   */
  const continuation = (chatId: ChatKey, messages: ReadonlyArray<ChatMessage> = []) =>
    Effect.gen(function*() {
      const claimed = yield* repo.claim(chatId, owner, leaseMs)
      if (claimed.length === 0) return undefined
      const name = yield* chats.agentOf(chatId)
      if (name === undefined) return undefined
      const agent = yield* agents.get(name)
      const ids = claimed.map((d) => d.approvalId)
      return (live: LiveTurn) =>
        composer.persisted({
          chatId,
          messages,
          context: undefined,
          agent,
          guard: () => "proceed",
          resume: resumeWith(chatId, agent, claimed),
          live
        }).pipe(
          // The user's turn: its provider calls counted for the user, as the turn that asked was.
          invokeAgent({ kind: "chat", agent: agent.name, userId: userOf(chatId), chatId }),
          Effect.tap(() => repo.finish(chatId, ids, owner)),
          Effect.tapError((error) =>
            error instanceof TurnInFlight
              // Another turn holds the chat: tried again shortly (any replica), the calls not started.
              ? repo.release(chatId, owner, BUSY_RETRY_MS)
              // Stored or not, the answers the tools gave are kept; the model's failure is the turn's (logged).
              : error instanceof ChatNotFound ? Effect.void : repo.finish(chatId, ids, owner)
          ),
          Effect.onInterrupt(() => repo.release(chatId, owner, 0)),
          // The chat was deleted: its decisions went with it.
          Effect.catchTag("ChatNotFound", () => Effect.void)
        )
    }).pipe(
      // An agent deleted since: the decision waits (as a wake does) until it is defined again.
      Effect.catchTag("AgentNotFound", (e) =>
        Effect.as(Effect.andThen(repo.release(chatId, owner, SWEEP_MS * 15), Effect.logWarning(`chat ${chatId}: ${e.error}`)), undefined))
    )

  /** The continuation on this replica, in the background: followed like any turn. */
  const runInBackground = (chatId: ChatKey) =>
    Effect.gen(function*() {
      const run = yield* continuation(chatId)
      if (run === undefined) return
      yield* streams.run(chatId, true, run)
    }).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) || Cause.squash(cause) instanceof TurnInFlight
          ? Effect.void
          : Effect.logWarning(`chat ${chatId}: the continuation of its approvals failed`, cause)
      ),
      Effect.annotateLogs({ chatId })
    )

  const decide: ChatApprovalsShape["decide"] = (chatId, approvalId, decision) =>
    Effect.gen(function*() {
      const asked = yield* repo.asked(chatId, approvalId)
      const decided = () => new ApprovalDecided({ error: `Approval "${approvalId}" was decided already: the first decision holds`, approvalId })
      if (asked === undefined) {
        // Not a turn's: a sub-agent job of the chat's may be parked on it.
        const outcome = yield* parked.decide(chatId, approvalId, decision)
        if (outcome === "decided") return
        if (outcome === "decided-already") return yield* decided()
        // A chat the caller does not have asks for nothing: the same 404 as an unknown approval.
        return yield* new ApprovalNotFound({ error: `No approval "${approvalId}" is asked for in chat "${chatIdOf(chatId)}"`, approvalId })
      }
      if (asked.answered || asked.decided) return yield* decided()
      const toolCallId = asked.message.metadata?.["approvals"] as Record<string, string>
      const recorded = yield* repo.decide(chatId, [{
        approvalId,
        toolCallId: toolCallId[approvalId]!,
        approved: decision.approved,
        ...(decision.reason === undefined ? {} : { reason: decision.reason })
      }], owner, leaseMs)
      if (!recorded.has(approvalId)) return yield* decided()
      yield* FiberSet.run(background, runInBackground(chatId))
    })

  const responded: ChatApprovalsShape["responded"] = (chatId, responses, messages) =>
    Effect.gen(function*() {
      const fresh = []
      let jobs = 0
      for (const response of responses) {
        const asked = yield* repo.asked(chatId, response.approvalId)
        if (asked === undefined) {
          // A call a sub-agent job waits on (the stream announced it): decided as the route decides it.
          const decision = { approved: response.approved, ...(response.reason === undefined ? {} : { reason: response.reason }) }
          if ((yield* parked.decide(chatId, response.approvalId, decision)) === "decided") jobs++
          continue
        }
        if (asked.answered || asked.decided) continue
        fresh.push(response)
      }
      const recorded = yield* repo.decide(chatId, fresh, owner, leaseMs)
      if (recorded.size === 0) return jobs > 0 ? "jobs" as const : undefined
      return yield* continuation(chatId, messages)
    })

  const supersede = (chatId: ChatKey): Resume => (conversation) =>
    Effect.gen(function*() {
      const waiting = approvalsIn(conversation).filter((a) => !a.answered)
      if (waiting.length === 0) return { messages: [], ask: true }
      // Only the client's results since the asking answer (its own calls of the same round): stored,
      // and the decision, when it comes, asks the model. A message of the user's is going on without it.
      const asked = Math.max(...waiting.map((a) => conversation.indexOf(a.message)))
      if (!conversation.slice(asked + 1).some((m) => m.role === "user")) return { messages: [], ask: false }
      const recorded = yield* repo.decide(
        chatId,
        waiting.map((a) => ({ approvalId: a.approvalId, toolCallId: a.call.id, approved: false, reason: SUPERSEDED })),
        owner,
        0,
        true
      )
      // One decided meanwhile (its continuation not run yet): the chat is that continuation's first.
      if (recorded.size < waiting.length) {
        return yield* new TurnInFlight({
          error: `A decided approval of chat "${chatIdOf(chatId)}" is being carried out; retry once it has answered`,
          chatId: chatIdOf(chatId)
        })
      }
      const now = yield* Clock.currentTimeMillis
      return { messages: waiting.map((a) => denialOf(a.approvalId, a.call, SUPERSEDED, now)), ask: true }
    })

  // The sweep: continuations whose replica died, or that wait to be retried, taken by whichever replica looks first.
  yield* Effect.gen(function*() {
    const due = yield* repo.due(SWEEP_BATCH)
    yield* Effect.forEach(due, (chatId) => FiberSet.run(background, runInBackground(chatId)), { discard: true })
  }).pipe(
    Effect.catchCause((cause) => Effect.logWarning("approvals: the sweep failed", cause)),
    Effect.repeat(Schedule.spaced(SWEEP_MS)),
    Effect.forkScoped
  )

  return ChatApprovals.of({ supersede, decide, responded })
}))

/** The pending approvals as a figure of `/metrics` (`switchboard_approvals_pending`). */
export const layerGauges = Layer.effect(DatabaseGauges, Effect.gen(function*() {
  const repo = yield* ApprovalsRepo
  return [{
    name: "switchboard_approvals_pending",
    description: "Server tool calls waiting for a user's decision (asked for, not decided), in the database",
    read: repo.pendingCount
  }]
})).pipe(Layer.provide(ApprovalsRepo.layer))
