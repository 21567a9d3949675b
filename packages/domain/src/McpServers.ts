/**
 * An agent's MCP servers (docs/tools.md): tools that the server runs itself,
 * listed from a Model Context Protocol server over Streamable HTTP when a turn
 * starts and offered to the model as `{server}__{tool}`.
 *
 * What an operator writes carries the servers' `headers` (an `Authorization`
 * for that server, say); what is answered carries their names only: the
 * values are sealed at rest and never leave the server again.
 */
import { Schema } from "effect"
import { Text } from "./Json.ts"

/** 1–32 of `a-z 0-9 -`: the prefix of its tools' names. */
export const McpServerName = Schema.String.check(
  Schema.isPattern(/^[a-z0-9-]{1,32}$/u, { message: "must be 1 to 32 of a-z, 0-9 and -" })
)

/** An MCP server an agent may name at most. */
export const MAX_MCP_SERVERS = 8

/** Headers a server may be given at most, and the longest value (a bearer token fits many times over). */
export const MAX_MCP_HEADERS = 16
export const MAX_MCP_HEADER_CHARS = 8 * 1024

const HttpUrl = Text.check(
  Schema.isMaxLength(2048),
  Schema.isPattern(/^https?:\/\/[^\s]+$/u, { message: "must be an http:// or https:// URL" })
)

/** A header's name as HTTP has it (a token). */
const HeaderName = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/u, { message: "must be an HTTP header name" })
)

const HeaderValue = Schema.String.check(
  Schema.isMaxLength(MAX_MCP_HEADER_CHARS),
  // Visible ASCII, spaces and tabs: no line break that could start another header, and nothing an
  // HTTP client would refuse at request time (its error could quote the value).
  Schema.isPattern(/^[\t\x20-\x7e]*$/u, { message: "must be visible ASCII characters, spaces and tabs" })
)

/** A tool name of the server's, as its `tools/list` names it. */
const McpToolName = Text.check(Schema.isMinLength(1), Schema.isMaxLength(128))

const mcpFields = {
  name: McpServerName,
  url: HttpUrl,
  /** Only these of the server's tools are offered; absent: all of them. */
  tools: Schema.optionalKey(Schema.Array(McpToolName).check(Schema.isMaxLength(256))),
  /** `true`: every tool of the server needs a user's approval; a list: those tools. */
  requireApproval: Schema.optionalKey(Schema.Union([Schema.Boolean, Schema.Array(McpToolName).check(Schema.isMaxLength(256))]))
}

/**
 * An MCP server as an operator writes it. `headers` are write-only: stored sealed, never
 * answered. Absent on a server that had some (same name and URL) keeps them; `{}` clears them.
 */
export const McpServerBody = Schema.Struct({
  ...mcpFields,
  headers: Schema.optionalKey(
    Schema.Record(HeaderName, HeaderValue).check(
      Schema.makeFilter((headers) =>
        Object.keys(headers).length <= MAX_MCP_HEADERS ? undefined : `at most ${MAX_MCP_HEADERS} headers`
      )
    )
  )
})
export type McpServerBody = typeof McpServerBody.Type

/** An MCP server as it is answered: its headers' names, never their values. */
export const McpServerView = Schema.Struct({
  ...mcpFields,
  headerNames: Schema.Array(Schema.String)
})
export type McpServerView = typeof McpServerView.Type

export const mcpServerViewOf = (server: McpServerBody, keptHeaderNames?: ReadonlyArray<string>): McpServerView => ({
  name: server.name,
  url: server.url,
  ...(server.tools === undefined ? {} : { tools: server.tools }),
  ...(server.requireApproval === undefined ? {} : { requireApproval: server.requireApproval }),
  headerNames: server.headers === undefined ? [...(keptHeaderNames ?? [])] : Object.keys(server.headers).sort()
})

/** Separates a server's tool names in the name the model sees. */
export const MCP_TOOL_SEPARATOR = "__"

/** The longest tool name a provider takes (OpenAI's and Anthropic's limit). */
export const MAX_TOOL_NAME_CHARS = 64

/**
 * The name the model sees for `tool` of `server`: `{server}__{tool}`, any character outside
 * `a-zA-Z0-9_-` as `_`; `undefined` past 64 characters (such a tool is not offered).
 */
export const mcpToolName = (server: string, tool: string): string | undefined => {
  const name = `${server}${MCP_TOOL_SEPARATOR}${tool}`.replace(/[^a-zA-Z0-9_-]/g, "_")
  return name.length > MAX_TOOL_NAME_CHARS ? undefined : name
}

/** Whether a call of `tool` of `server` waits for a user's approval. */
export const needsApproval = (server: Pick<McpServerView, "requireApproval">, tool: string): boolean =>
  server.requireApproval === true || (Array.isArray(server.requireApproval) && server.requireApproval.includes(tool))

/**
 * The header names a stored server keeps when a write gives it none: those of the stored server
 * of the same name and URL (a new URL gets no credential meant for another).
 */
export const keptHeaderNames = (stored: { readonly mcpServers?: ReadonlyArray<McpServerView> | undefined } | undefined) =>
(server: McpServerBody): ReadonlyArray<string> | undefined =>
  stored?.mcpServers?.find((s) => s.name === server.name && s.url === server.url)?.headerNames

/** Whether a write gives any server's header values (write-only: they cannot be compared with what is stored). */
export const givesHeaderValues = (servers: ReadonlyArray<McpServerBody> | undefined): boolean =>
  (servers ?? []).some((server) => server.headers !== undefined && Object.keys(server.headers).length > 0)
