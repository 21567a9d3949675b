/**
 * The job tools, as chat's server tools (chat/ServerTools.ts): every kind of
 * the registry (`JobKinds.ts`) is offered as a tool, and a call to one is
 * executed by recording a job — answered at once by its acknowledgement, the
 * record written by the statement that stores the acknowledgement — and
 * every turn's end makes the chat's deferred wakes due (a wake turn's end
 * settles its job too). Chat composes the SQL into its own statements; what
 * is left to do once they committed is this process's signals.
 */
import type { ChatMessage, ToolCall } from "@switchboard/domain"
import { jobAcknowledgement } from "@switchboard/domain"
import { Clock, Effect, Layer, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { nothingOffered, ServerTools } from "../chat/ServerTools.ts"
import type { ServerToolsShape } from "../chat/ServerTools.ts"
import { isRegisteredKind, kindOf, registeredKinds } from "./JobKinds.ts"
import { JobSignals } from "./JobSignals.ts"
import type { NewJob } from "./JobsRepo.ts"
import { JobsRepo, wakesDueColumn } from "./JobsRepo.ts"
import { newMessageId } from "../chat/MessageIds.ts"

/** "a, b and c" */
const listed = (names: ReadonlyArray<string>) =>
  names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`

/** What the system prompt says of the job tools while they are offered. */
export const jobsInstructions = (names: ReadonlyArray<string>) =>
  [
    `The tools ${listed(names)} dispatch sub-agents that work in the background: a call returns at once with`,
    "an acknowledgement, so keep going with your turn. Each result arrives later as a message carrying the sub-agent's",
    "result (not written by the user): use it when it comes."
  ].join(" ")

/** An invalid call's answer: a tool error the model can correct. */
const invalidCall = (call: ToolCall, kind: string, reason: string, id: string, now: number): ChatMessage => {
  const error = `invalid arguments for ${kind}: ${reason}`
  return { id, role: "tool", content: error, toolResult: { toolCallId: call.id, name: kind, error }, timestamp: now }
}

/** The job tools on the jobs' repository and this process's signals. */
export const make = Effect.gen(function*() {
  const repo = yield* JobsRepo
  const signals = yield* JobSignals

  const execute: ServerToolsShape["execute"] = Effect.fnUntraced(function*(turn, calls) {
    const now = yield* Clock.currentTimeMillis
    const created: Array<NewJob> = []
    const results: Array<ChatMessage> = []
    for (const call of calls) {
      const kind = call.name
      if (!isRegisteredKind(kind)) continue
      const id = newMessageId()
      if (call.invalidArgs !== undefined) {
        results.push(invalidCall(call, kind, call.invalidArgs, id, now))
        continue
      }
      const decoded = Schema.decodeUnknownResult(kindOf(kind).input)(call.args)
      if (decoded._tag === "Failure") {
        results.push(invalidCall(call, kind, decoded.failure.message.replace(/\s*\n\s*/g, " "), id, now))
        continue
      }
      const job: NewJob = { id: `job_${randomUUID()}`, chatId: turn.chatId, kind, toolCallId: call.id, input: decoded.success, context: turn.context }
      const ack = jobAcknowledgement(job)
      created.push(job)
      results.push({ id, role: "tool", content: ack.message, toolResult: { toolCallId: call.id, name: kind, result: ack }, timestamp: now })
    }
    return {
      results,
      dispatched: created.map((j) => ({ id: j.id, kind: j.kind, toolCallId: j.toolCallId })),
      writes: {
        ...repo.jobsCreated(created),
        // The statement notified every replica; this process's runner hears it at once.
        after: () => created.length > 0 ? signals.run.local : Effect.void
      }
    }
  })

  return ServerTools.of({
    offeredTo: (agent) => {
      const kinds = new Set<string>(agent.jobKinds)
      const offered = registeredKinds.filter((k) => kinds.has(k.kind))
      return Effect.succeed(
        offered.length === 0
          ? nothingOffered
          : { schemas: offered.map((k) => k.tool), instructions: jobsInstructions(offered.map((k) => k.kind)) }
      )
    },
    handles: isRegisteredKind,
    execute,
    turnEnded: (chatId, settles) => ({
      ...repo.turnEnd(chatId, settles === undefined ? undefined : { jobId: settles.id, status: settles.status }),
      // Wakes that waited behind this turn are due now (every replica heard of it).
      after: (row) => row?.[wakesDueColumn] === true ? signals.wake.local : Effect.void
    })
  })
})

/** The job tools alone as chat's server tools. */
export const layerNoDeps = Layer.effect(ServerTools, make)
