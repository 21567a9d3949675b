/**
 * An accepted turn's provider rounds, on the one step loop (`runSteps`): the
 * provider called with the conversation, the server tool calls of its answer
 * executed and stored with their results, again until an answer without
 * server calls — then that answer stored and the marker released in one
 * statement (the turn's end) — or with a client's calls, which end the turn.
 */
import type { ChatMessage, DispatchedJob, ProviderChatParams, ToolCall } from "@switchboard/domain"
import { inCallOrder, maxStoredValueBytes, othersPending, pendingApprovalsIn, runSteps, stepCountIs, traced } from "@switchboard/domain"
import type { Duration } from "effect"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { ProviderError } from "@switchboard/providers"
import type { ProviderAdapter } from "@switchboard/providers"
import type { ChatRepo } from "../ChatRepo.ts"
import { inBatches } from "../ChatRepo.ts"
import { fitsStorage, storedBytes } from "../../db/StoredSize.ts"
import { bothWrites } from "../ServerTools.ts"
import type { ServerToolsShape } from "../ServerTools.ts"
import { markStarted, publish } from "../stream/LiveTurn.ts"
import { offerOf } from "./Offer.ts"
import { publishExecuted, publishRunning, streamRound } from "./StreamRound.ts"
import type { RoundAnswer, TurnEnd, TurnInput } from "./TurnTypes.ts"
import { addUsage, assistantMessage, ended, goneWith, maxServerToolRounds, respond } from "./TurnTypes.ts"

/** The provider rounds of an accepted turn, server tool calls executed between them. */
export interface RoundsDeps {
  readonly adapter: ProviderAdapter["Service"]
  readonly repo: ChatRepo["Service"]
  readonly tools: ServerToolsShape
  readonly sql: SqlClient.SqlClient
  readonly markerTtl: Duration.Duration
}

export const makeRounds = ({ adapter, markerTtl, repo, sql, tools }: RoundsDeps) => Effect.fnUntraced(function*(
  input: TurnInput,
  turnId: string,
  transcript: ReadonlyArray<ChatMessage>,
  generation: string | undefined,
  end: TurnEnd
) {
  const { chatId, context, live } = input
  const conversation = [...transcript]
  const offer = yield* offerOf(input.agent, context, tools)
  const { systemPrompt, owns } = offer
  const model = offer.model === undefined ? {} : { model: offer.model }
  const dispatched: Array<DispatchedJob> = []
  const turnEnd = tools.turnEnded(chatId, input.settles)
  if (live !== undefined) publish(live, { type: "start", messageId: live.announcedId })
  let renewed = false

  // Calls the transcript left waiting, answered first (an approval's decision, or their denial).
  if (input.resume !== undefined) {
    const resumed = yield* input.resume(conversation, live)
    const answered = () => {
      // What waits, and the message that asks: a client that sent results while approvals wait is told so.
      const pending = pendingApprovalsIn(conversation)
      const asking = conversation.findLast((m) => m.role === "assistant")
      return {
        content: "",
        messageId: asking?.id ?? live?.messageId ?? turnId,
        ...(pending.length > 0 ? { pendingApprovals: pending } : {})
      }
    }
    if (resumed.messages.length > 0) {
      if (!(yield* repo.append(chatId, resumed.messages, generation))) return yield* goneWith(chatId, answered())
      conversation.push(...resumed.messages)
      if (live !== undefined) markStarted(live)
    }
    if (!resumed.ask) {
      const answer = answered()
      // Other calls still wait (a client's, another approval's), or nothing was left to answer:
      // the turn ends here, and the answers that come later continue the chat.
      if (live !== undefined) markStarted(live)
      const closed = yield* repo.turnEnded(chatId, turnId, turnEnd, undefined, generation)
      yield* ended(end, turnEnd, closed.row)
      return { _tag: "Answered", response: answer } as const
    }
  }

  /** A round's provider call: the answer as the assistant message to store, its calls those kept. */
  const ask = (round: number) =>
    Effect.gen(function*() {
      const toolsOffered = round < maxServerToolRounds
      // The marker covers one provider call at a time: each further round extends it (a round
      // that executed server tools did so in its own statement).
      if (round > 1 && !renewed) yield* repo.renewTurn(chatId, turnId, markerTtl)
      renewed = false
      const params: ProviderChatParams = {
        messages: inCallOrder(conversation),
        systemPrompt,
        toolSchemas: toolsOffered && offer.serverTools.length > 0 ? [...offer.clientTools, ...offer.serverTools] : offer.clientTools,
        ...model
      }
      const answer: RoundAnswer = live === undefined
        ? { ...(yield* adapter.chat(params)), stopped: false }
        : yield* streamRound(adapter, live, params, owns, round)
      end.usage = addUsage(end.usage, answer.usage)
      end.stopped = answer.stopped
      const calls = answer.toolCalls ?? []
      const clientCalls = calls.filter((c) => !owns(c.name))
      const serverCalls = toolsOffered ? calls.filter((c) => owns(c.name)) : []
      if (serverCalls.length < calls.length - clientCalls.length) {
        yield* Effect.logWarning(`chat ${chatId}: server tool calls past the round limit (${maxServerToolRounds}) were dropped`)
      }
      const toolCalls = [...serverCalls, ...clientCalls]
      // A call needing approval is not run: the message names its approval, and the turn ends with it.
      const approvals = Object.fromEntries(
        clientCalls.filter((c) => offer.needsApproval(c.name)).map((c) => [`apr_${randomUUID().replaceAll("-", "")}`, c.id])
      )
      const asked = Object.keys(approvals).length > 0
      const assistant = yield* assistantMessage(answer.content, toolCalls, {
        // The stream announced the turn's first message under this id.
        ...(round === 1 && live !== undefined ? { id: live.messageId } : {}),
        ...(answer.stopped || asked ? { metadata: { ...(answer.stopped ? { stopped: true } : {}), ...(asked ? { approvals } : {}) } } : {})
      })
      if (live !== undefined) {
        for (const [approvalId, toolCallId] of Object.entries(approvals)) publish(live, { type: "tool-approval-request", approvalId, toolCallId })
      }
      // An answer the transcript could not hold is refused like one the provider could not send.
      if (!fitsStorage(assistant)) {
        return yield* new ProviderError({
          reason: "TooLarge",
          message: `the answer is ${storedBytes(assistant)} bytes of JSON, over the ${maxStoredValueBytes} a stored message holds`
        })
      }
      return { assistant, toolCalls }
    })

  /** A round's server calls executed and stored with their results; `gone`: the chat was deleted, nothing stored. */
  const run = ({ answer: { assistant }, others, owned }: { readonly answer: { readonly assistant: ChatMessage }; readonly owned: ReadonlyArray<ToolCall>; readonly others: ReadonlyArray<ToolCall> }) =>
    Effect.gen(function*() {
      // A call to another service may take long: the marker is renewed first, so it cannot expire meanwhile.
      const remote = owned.filter((call) => offer.remote(call.name))
      if (remote.length > 0) yield* repo.renewTurn(chatId, turnId, markerTtl)
      // A call that waits on another service is shown running while it does.
      if (live !== undefined) publishRunning(live, remote)
      const executed = yield* tools.execute({ chatId, context, agent: input.agent, conversation }, owned)
      const results = executed.results
      if (live !== undefined) publishExecuted(live, owned, results, new Set(remote.map((call) => call.id)))
      const last = others.length > 0
      const batches = inBatches([assistant, ...results])
      // A round that executed server tools: its calls, their results (no server tool call is ever
      // stored unanswered), the tools' writes and the marker's renewal for the next call, in one
      // statement. A turn whose marker expired meanwhile writes them all the same, as it always did (below).
      const inOne = !last && batches.length === 1
        ? yield* repo.toolRound(chatId, turnId, markerTtl, batches[0]!, executed.writes)
        : undefined
      renewed = inOne !== undefined
      if (inOne !== undefined) {
        yield* executed.writes.after(inOne.row)
      } else {
        // The calls, their results and the tools' writes together. The chat's row held first: a chat
        // deleted meanwhile gets nothing (no orphan job either).
        const writes = last ? bothWrites(executed.writes, turnEnd) : executed.writes
        const written = yield* sql.withTransaction(Effect.gen(function*() {
          if (!(yield* repo.holdChat(chatId, generation))) return undefined
          if (last) {
            const row = yield* repo.writeTools(writes)
            // The chat is free the moment the turn's end is visible (a wake's job settled with it):
            // a client that sees either may go on at once. The release below is then a no-op.
            if (batches.length > 1) yield* repo.append(chatId, [assistant, ...results], generation)
            yield* repo.endTurn(chatId, turnId, batches.length > 1 ? [] : [assistant, ...results], generation)
            return row
          }
          yield* repo.append(chatId, [assistant, ...results], generation)
          return yield* repo.writeTools(writes)
        })).pipe(Effect.orDie)
        // This round's jobs were not created: the answer says so by leaving them out.
        if (written === undefined) return { gone: true }
        if (last) yield* ended(end, writes, written)
        else yield* writes.after(written)
      }
      dispatched.push(...executed.dispatched)
      if (!last) conversation.push(assistant, ...results)
      return { gone: false }
    })

  // Server tools run here; a client's calls end the turn (stored, and answered, with it): the client
  // runs them and continues the chat. The last round offers no server tool, so it always answers.
  const done = yield* runSteps({
    ask,
    owns: (call) => owns(call.name),
    run,
    stopWhen: [
      { reason: "gone", when: ({ ran }) => ran.gone },
      othersPending("clientCalls"),
      stepCountIs(maxServerToolRounds, "cap")
    ]
  })
  const { assistant } = done.answer
  const response = respond(assistant, done.others, dispatched)
  switch (done.reason) {
    case "gone":
      return yield* goneWith(chatId, response)
    case "clientCalls":
    case "cap":
      return { _tag: "Answered", response } as const
    case "answered": {
      if (live !== undefined) publish(live, { type: "finish-step" })
      // The common end: the answer stored, the tools' end writes (a wake's job settled), the marker
      // released, in one statement (the release that follows has nothing left to do).
      const [only, ...more] = inBatches([assistant])
      if (more.length > 0 && !(yield* repo.append(chatId, [assistant], generation))) return yield* goneWith(chatId, response)
      const closed = yield* repo.turnEnded(chatId, turnId, turnEnd, more.length > 0 ? undefined : only, generation)
      yield* ended(end, turnEnd, closed.row)
      if (closed.chatGone) return yield* goneWith(chatId, response)
      return { _tag: "Answered", response } as const
    }
  }
}, traced("TurnComposer.rounds"))
