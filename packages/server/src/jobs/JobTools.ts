/**
 * The job tools, as chat's server tools (chat/ServerTools.ts): every kind of
 * the registry (`JobKinds.ts`) is offered as a tool, and a call to one is
 * executed by recording a job — answered at once by its acknowledgement, the
 * record written by the statement that stores the acknowledgement — and
 * every turn's end makes the chat's deferred wakes due (a wake turn's end
 * settles its job too). Chat composes the SQL into its own statements; what
 * is left to do once they committed is this process's signals.
 *
 * A kind an operator defined (docs/subagents.md) is offered from its stored
 * definition, read when the turn starts; a call of one is checked against
 * its input parameters, and the job carries the definition as it is then.
 */
import type { ChatMessage, JsonObject, SubagentDefinition, ToolCall } from "@switchboard/domain"
import { isBuiltInKind, isKindName, jobAcknowledgement, steerMessageId, subagentResultOf, subagentToolOf, toParametersSchema } from "@switchboard/domain"
import { Clock, Effect, Layer, Option, Schema } from "effect"
import { pathOf, validatorFor } from "../agents/AgentCheck.ts"
import { SubagentKindsRepo } from "./kinds/SubagentKindsRepo.ts"
import { randomUUID } from "node:crypto"
import { nothingOffered, ServerTools } from "../chat/ServerTools.ts"
import type { ServerToolsShape } from "../chat/ServerTools.ts"
import { isRegisteredKind, kindOf, registeredKinds } from "./JobKinds.ts"
import { transcriptLimit } from "../chat/ChatSettings.ts"
import { storedBytes } from "../db/StoredSize.ts"
import { JobMaxActivePerChatSetting } from "./JobsConfig.ts"
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

/** A call answered with a tool error the model reads (no job made). */
const toolError = (call: ToolCall, kind: string, error: string, id: string, now: number): ChatMessage => ({
  id,
  role: "tool",
  content: error,
  toolResult: { toolCallId: call.id, name: kind, error },
  timestamp: now
})

/** An invalid call's answer: a tool error the model can correct. */
const invalidCall = (call: ToolCall, kind: string, reason: string, id: string, now: number): ChatMessage =>
  toolError(call, kind, `invalid arguments for ${kind}: ${reason}`, id, now)

/** Why `args` do not fit the kind's input parameters (JSON Schema validation), or undefined when they do. */
const inputProblem = (definition: SubagentDefinition, args: unknown): string | undefined => {
  const validate = validatorFor(toParametersSchema(definition.input))
  if (validate(args)) return undefined
  const first = validate.errors?.[0]
  const path = pathOf(first?.instancePath ?? "")
  const at = path === "" ? "" : `${path} `
  const extra = first?.params !== undefined && "additionalProperty" in first.params ? ` (${String(first.params["additionalProperty"])})` : ""
  return `${at}${first?.message ?? "does not match the parameters"}${extra}`
}

/**
 * The chat's sub-agents at work, as its conversation shows them: dispatched (an acknowledgement) and
 * their result not yet delivered (no steer). Read from the turn's conversation, not asked of the
 * database: only a turn makes jobs or delivers a steer, and a chat's turns (wakes included) hold
 * its marker one at a time, so the transcript the turn read is the whole story. (A client cannot
 * forge a steer: `ChatTurns` refuses a result the server did not store.)
 */
const atWork = (conversation: ReadonlyArray<ChatMessage>): number => {
  const steered = new Set<string>()
  for (const message of conversation) if (subagentResultOf(message) !== undefined) steered.add(message.id)
  let n = 0
  for (const message of conversation) {
    const result = message.role === "tool" ? message.toolResult?.result : undefined
    if (isAcknowledgement(result) && !steered.has(steerMessageId(result.jobId))) n++
  }
  return n
}

const isAcknowledgement = (value: unknown): value is { readonly status: "dispatched"; readonly jobId: string } =>
  typeof value === "object" && value !== null && "status" in value && value.status === "dispatched" &&
  "jobId" in value && typeof value.jobId === "string"

/** The job tools on the jobs' repository and this process's signals (and the defined kinds, when there is their repository). */
export const make = Effect.gen(function*() {
  const repo = yield* JobsRepo
  const signals = yield* JobSignals
  const kinds = Option.getOrUndefined(yield* Effect.serviceOption(SubagentKindsRepo))
  /** The defined kinds of these names that exist. */
  const definedOf = (names: ReadonlyArray<string>) => {
    const wanted = [...new Set(names.filter((name) => !isBuiltInKind(name)))]
    return kinds === undefined || wanted.length === 0 ? Effect.succeed([]) : kinds.get(wanted)
  }

  const maxActive = yield* JobMaxActivePerChatSetting.config
  const chatLimit = yield* transcriptLimit
  /**
   * How many more jobs the turn's chat may make, and what a call past them is answered. A chat at its
   * limit takes no client turn, but its wake turns still run (they deliver results): a wake that
   * dispatched again would keep a full chat growing, each result waking a turn that dispatches the next.
   */
  const roomIn = (conversation: ReadonlyArray<ChatMessage>): { left: number; readonly refusal: (kind: string) => string } =>
    conversation.length >= chatLimit.messages || storedBytes(conversation) >= chatLimit.bytes
      ? {
        left: 0,
        refusal: (kind) =>
          `${kind} was not dispatched: this chat is at its limit (CHAT_TRANSCRIPT_MAX_MESSAGES, CHAT_TRANSCRIPT_MAX_BYTES) ` +
          "and takes no more sub-agents"
      }
      : {
        left: maxActive - atWork(conversation),
        refusal: (kind) =>
          `${kind} was not dispatched: this chat has ${maxActive} sub-agents at work, the most it may have ` +
          "(JOB_MAX_ACTIVE_PER_CHAT); dispatch it again once their results have come in"
      }

  const execute: ServerToolsShape["execute"] = Effect.fnUntraced(function*(turn, calls) {
    const now = yield* Clock.currentTimeMillis
    const created: Array<NewJob> = []
    const results: Array<ChatMessage> = []
    const defined = new Map((yield* definedOf(calls.map((call) => call.name))).map((d) => [d.kind, d]))
    // Measured once a call would make a job (most rounds make none); the round's own jobs count too.
    let room: ReturnType<typeof roomIn> | undefined
    for (const call of calls) {
      const kind = call.name
      const definition = defined.get(kind)
      if (!isRegisteredKind(kind) && definition === undefined) {
        // Offered when the turn started, deleted since: the model reads it and goes on.
        if (isKindName(kind)) results.push(invalidCall(call, kind, "this sub-agent kind is not defined any more", newMessageId(), now))
        continue
      }
      const id = newMessageId()
      if (call.invalidArgs !== undefined) {
        results.push(invalidCall(call, kind, call.invalidArgs, id, now))
        continue
      }
      let input: NewJob["input"]
      if (definition !== undefined) {
        const problem = inputProblem(definition, call.args)
        if (problem !== undefined) {
          results.push(invalidCall(call, kind, problem, id, now))
          continue
        }
        input = call.args as JsonObject
      } else {
        const decoded = Schema.decodeUnknownResult(kindOf(kind).input)(call.args)
        if (decoded._tag === "Failure") {
          results.push(invalidCall(call, kind, decoded.failure.message.replace(/\s*\n\s*/g, " "), id, now))
          continue
        }
        input = decoded.success
      }
      const job: NewJob = {
        id: `job_${randomUUID()}`,
        chatId: turn.chatId,
        kind,
        toolCallId: call.id,
        input,
        context: turn.context,
        ...(definition === undefined ? {} : { definition })
      }
      room ??= roomIn(turn.conversation)
      if (room.left <= 0) {
        results.push(toolError(call, kind, room.refusal(kind), id, now))
        continue
      }
      room.left--
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
    offeredTo: (agent) =>
      Effect.map(definedOf(agent.jobKinds), (defined) => {
        const named = new Set<string>(agent.jobKinds)
        const builtIn = registeredKinds.filter((k) => named.has(k.kind)).map((k) => k.tool)
        // The agent's order for the defined kinds (a kind deleted since the agent was written is left out).
        const byName = new Map(defined.map((d) => [d.kind, subagentToolOf(d)]))
        const offered = [...builtIn, ...agent.jobKinds.flatMap((kind) => byName.get(kind) ?? [])]
        return offered.length === 0
          ? nothingOffered
          : { schemas: offered, instructions: jobsInstructions(offered.map((tool) => tool.name)) }
      }),
    // A kind's name has no "__" (an MCP tool's has): the job tools take every owned call named like a kind.
    handles: isKindName,
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
