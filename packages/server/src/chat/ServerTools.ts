/**
 * The port through which a persisted chat turn offers and executes server
 * tools: tools the server runs itself, whose calls never reach the client
 * (the job tools, an agent's MCP servers' tools). Chat defines it; a feature
 * with server tools implements it (the jobs feature: JobTools; the MCP
 * feature: McpTools), and `allServerTools` makes one of several. Without one
 * the default offers none, and chat is a plain chat.
 *
 * The SQL of a turn stays chat's. An implementation hands chat FRAGMENTS
 * (`ToolWrites`) that chat composes into the statements a turn runs anyway —
 * the round that stores the calls' results and renews the marker, the turn's
 * end that stores its answer and releases the marker — so a server tool adds
 * no round trip, and the in-flight marker is written by chat alone.
 */
import type { AgentDefinition, ChatMessage, DispatchedJob, JsonObject, ToolCall, ToolSchema } from "@switchboard/domain"
import { Context, Effect } from "effect"
import type { Statement } from "effect/sql"
import type { ChatKey } from "../users/ChatKey.ts"

/** What one of chat's statements returns, as the tools' `after` reads it. */
export type WrittenRow = Readonly<Record<string, unknown>>

/** The server tools' part of one of chat's statements. */
export interface ToolWrites {
  /**
   * Entries of the statement's `WITH` list (`name AS (…)`), each writing only when `when` holds: a
   * condition on chat's own parts of the statement (e.g. that the turn still holds its marker).
   */
  readonly ctes: (when: Statement.Fragment) => ReadonlyArray<Statement.Fragment>
  /** Expressions the statement returns beside chat's own columns (`expr AS name`): what `after` reads. */
  readonly columns: ReadonlyArray<Statement.Fragment>
  /** Once the statement is committed, with its row (`undefined`: it returned none, nothing was written). */
  readonly after: (row: WrittenRow | undefined) => Effect.Effect<void>
}

export const noWrites: ToolWrites = { ctes: () => [], columns: [], after: () => Effect.void }

/** Both parts in one statement (their names must not clash: each implementation names its own). */
export const bothWrites = (a: ToolWrites, b: ToolWrites): ToolWrites => ({
  ctes: (when) => [...a.ctes(when), ...b.ctes(when)],
  columns: [...a.columns, ...b.columns],
  after: (row) => Effect.andThen(a.after(row), b.after(row))
})

/** The server tool calls of one round, executed. */
export interface ExecutedCalls {
  /** The tool messages answering the calls, in the calls' order: stored with the message that made them. */
  readonly results: ReadonlyArray<ChatMessage>
  /** What the turn's response lists as dispatched (`ChatResponse.jobs`). */
  readonly dispatched: ReadonlyArray<DispatchedJob>
  /** What the calls record, in the statement that stores their results. */
  readonly writes: ToolWrites
}

/** Server-side work that a server-side turn completes in its last statement (a job whose steer it delivers). */
export interface Settlement {
  readonly id: string
  readonly status: "done" | "error"
}

/** The server tools a turn of an agent is offered, and what its system prompt says of them. */
export interface OfferedTools {
  /** Offered beside the client's tools; a call to any other is the client's, as an unknown tool's is. */
  readonly schemas: ReadonlyArray<ToolSchema>
  /** What the system prompt says of them; `undefined`: nothing. */
  readonly instructions: string | undefined
  /**
   * Those whose calls wait on another service (an MCP server's): the turn's marker is renewed
   * before they run, so a long call does not let it expire. Absent: none.
   */
  readonly remote?: ReadonlyArray<string> | undefined
  /**
   * Name prefixes these tools answer even when no offered tool has the name (an MCP server's
   * `{server}__`: a call of a tool it does not have is a tool error the model reads, not a
   * call left to the client). Absent: none.
   */
  readonly prefixes?: ReadonlyArray<string> | undefined
  /**
   * Those a user must approve before each call (an MCP server's `requireApproval`): the turn does
   * not run such a call; it stores it unanswered and ends, and the user's decision continues the
   * chat (approvals/). Absent: none.
   */
  readonly approval?: ReadonlyArray<string> | undefined
}

export const nothingOffered: OfferedTools = { schemas: [], instructions: undefined }

/** The turn a round's calls are executed for. */
export interface ToolTurn {
  readonly chatId: ChatKey
  readonly context: JsonObject | undefined
  readonly agent: AgentDefinition
  /** The conversation before the round's answer: the stored transcript, then what the turn added. */
  readonly conversation: ReadonlyArray<ChatMessage>
}

export interface ServerToolsShape {
  /**
   * What a persisted turn of `agent` is offered: the tool's feature decides from the definition
   * (the job tools: the agent's `jobKinds`), so the turn has no rule of its own for any agent.
   */
  offeredTo(agent: AgentDefinition): Effect.Effect<OfferedTools>
  /** Whether a call of this name is one of these tools' (the one of several tools that runs it). */
  handles(name: string): boolean
  /**
   * Executes one round's calls to these tools (those it `handles`), its results in the calls' order.
   * Never fails: a bad call is answered by a tool error the model reads.
   */
  execute(turn: ToolTurn, calls: ReadonlyArray<ToolCall>): Effect.Effect<ExecutedCalls>
  /** What the end of every turn of `chatId` writes (the statement that releases its marker); `settles`: see `Settlement`. */
  turnEnded(chatId: ChatKey, settles: Settlement | undefined): ToolWrites
}

/** The default: no server tools (a server without jobs). */
export const noServerTools: ServerToolsShape = {
  offeredTo: () => Effect.succeed(nothingOffered),
  handles: () => false,
  execute: () => Effect.succeed({ results: [], dispatched: [], writes: noWrites }),
  turnEnded: () => noWrites
}

/**
 * Several features' tools as one: offered together, each call executed by the one that handles
 * it — each's calls of a round together, the results put back in the calls' order — and every
 * feature's writes in the same statement. The offers are listed one after another: only an
 * agent's MCP servers can be slow to list (the job tools read the kinds they name by key, most
 * agents name built-in ones and read nothing), so a fiber per part on every turn bought nothing
 * for almost every turn.
 */
export const allServerTools = (parts: ReadonlyArray<ServerToolsShape>): ServerToolsShape => ({
  offeredTo: (agent) =>
    Effect.map(Effect.forEach(parts, (part) => part.offeredTo(agent)), (offers) => {
      const instructions = offers.flatMap((o) => o.instructions === undefined ? [] : [o.instructions])
      return {
        schemas: offers.flatMap((o) => o.schemas),
        instructions: instructions.length === 0 ? undefined : instructions.join("\n\n"),
        remote: offers.flatMap((o) => o.remote ?? []),
        prefixes: offers.flatMap((o) => o.prefixes ?? []),
        approval: offers.flatMap((o) => o.approval ?? [])
      }
    }),
  handles: (name) => parts.some((part) => part.handles(name)),
  execute: (turn, calls) =>
    Effect.map(
      Effect.forEach(parts, (part) => {
        const mine = calls.filter((call) => part.handles(call.name))
        return mine.length === 0 ? Effect.succeed(undefined) : part.execute(turn, mine)
      }, { concurrency: "unbounded" }),
      (done) => {
        const executed = done.filter((d) => d !== undefined)
        const order = new Map(calls.map((call, i) => [call.id, i]))
        const position = (m: ChatMessage) => order.get(m.toolResult?.toolCallId ?? "") ?? calls.length
        return {
          results: executed.flatMap((d) => d.results).sort((a, b) => position(a) - position(b)),
          dispatched: executed.flatMap((d) => d.dispatched),
          writes: executed.map((d) => d.writes).reduce(bothWrites, noWrites)
        }
      }
    ),
  turnEnded: (chatId, settles) => parts.map((part) => part.turnEnded(chatId, settles)).reduce(bothWrites, noWrites)
})

/** A reference: a layer of the tools' feature provides them, and without one a turn has none. */
export const ServerTools = Context.Reference<ServerToolsShape>("switchboard/server/chat/ServerTools", {
  defaultValue: () => noServerTools
})
