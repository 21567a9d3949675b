/**
 * The port through which a persisted chat turn offers and executes server
 * tools: tools the server runs itself, whose calls never reach the client
 * (the job tools are the ones there are). Chat defines it; a feature with
 * server tools implements it with a Layer (the jobs feature: JobTools).
 * Without one the default offers none, and chat is a plain chat.
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
}

export const nothingOffered: OfferedTools = { schemas: [], instructions: undefined }

export interface ServerToolsShape {
  /**
   * What a persisted turn of `agent` is offered: the tool's feature decides from the definition
   * (the job tools: the agent's `jobKinds`), so the turn has no rule of its own for any agent.
   */
  offeredTo(agent: AgentDefinition): OfferedTools
  /** Executes one round's calls to these tools. Never fails: a bad call is answered by a tool error the model reads. */
  execute(
    turn: { readonly chatId: ChatKey; readonly context: JsonObject | undefined },
    calls: ReadonlyArray<ToolCall>
  ): Effect.Effect<ExecutedCalls>
  /** What the end of every turn of `chatId` writes (the statement that releases its marker); `settles`: see `Settlement`. */
  turnEnded(chatId: ChatKey, settles: Settlement | undefined): ToolWrites
}

/** The default: no server tools (a server without jobs). */
export const noServerTools: ServerToolsShape = {
  offeredTo: () => nothingOffered,
  execute: () => Effect.succeed({ results: [], dispatched: [], writes: noWrites }),
  turnEnded: () => noWrites
}

/** A reference: a layer of the tools' feature provides them, and without one a turn has none. */
export const ServerTools = Context.Reference<ServerToolsShape>("switchboard/server/chat/ServerTools", {
  defaultValue: () => noServerTools
})
