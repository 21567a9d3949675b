/**
 * MCP server headers as credentials — an agent's, or a sub-agent kind's (owner
 * `subagent:<kind>`): sealed under `CREDENTIAL_KEY` when the definition is
 * written (`agent {owner} mcp {server}` the associated data, so a row copied
 * onto another owner or server does not open), opened only by the run that
 * connects to the server, re-sealed by a key rotation. No value is logged or
 * answered; the definition holds the names.
 */
import type { AgentDefinition, CredentialUnavailable, McpServerBody } from "@switchboard/domain"
import { Effect, Redacted, Schema } from "effect"
import { CredentialKeys } from "../secrets/CredentialKeys.ts"
import { resealAll } from "../secrets/Rotation.ts"
import type { RotationCounts } from "../secrets/Rotation.ts"
import type { HeadersWrite, SealedHeaders } from "./AgentsRepo.ts"
import { AgentsRepo } from "./AgentsRepo.ts"

const ownerOf = (agent: string, server: string) => `agent ${agent} mcp ${server}`

const HeadersJson = Schema.fromJsonString(Schema.Record(Schema.String, Schema.String))
const decodeHeaders = Schema.decodeUnknownOption(HeadersJson)

/**
 * What writing `agent` (its `mcpServers` as the body gave them) does to its sealed headers: the
 * servers given `headers` sealed anew; a server given none keeps its stored ones when the
 * definition kept their names (same name and URL: `keptHeaderNames`), else it has none.
 */
export const sealHeaders = (
  agent: { readonly name: string; readonly mcpServers?: AgentDefinition["mcpServers"] },
  servers: ReadonlyArray<McpServerBody>
): Effect.Effect<HeadersWrite, CredentialUnavailable, CredentialKeys> =>
  Effect.gen(function*() {
    const keys = yield* CredentialKeys
    const sealed: Array<SealedHeaders> = []
    const kept: Array<string> = []
    for (const server of servers) {
      if (server.headers === undefined) {
        const view = agent.mcpServers?.find((s) => s.name === server.name)
        if (view !== undefined && view.headerNames.length > 0) kept.push(server.name)
        continue
      }
      if (Object.keys(server.headers).length === 0) continue
      const plaintext = Redacted.make(JSON.stringify(server.headers))
      sealed.push({ agent: agent.name, server: server.name, sealed: yield* keys.seal(ownerOf(agent.name, server.name), plaintext) })
    }
    return { sealed, kept }
  })

/** The agent's servers' headers, opened: by server name (a server with none is absent). */
export const openHeaders = (
  agent: string
): Effect.Effect<ReadonlyMap<string, Readonly<Record<string, string>>>, CredentialUnavailable, CredentialKeys | AgentsRepo> =>
  Effect.gen(function*() {
    const keys = yield* CredentialKeys
    const rows = yield* (yield* AgentsRepo).mcpHeaders(agent)
    const opened = new Map<string, Readonly<Record<string, string>>>()
    for (const row of rows) {
      const plaintext = yield* keys.open(ownerOf(row.agent, row.server), row.sealed)
      const headers = decodeHeaders(Redacted.value(plaintext))
      if (headers._tag === "Some") opened.set(row.server, headers.value)
    }
    return opened
  })

/** Every agent's headers sealed under the current key (`secrets/Rotation.ts`), named `agent/server`. */
export const rotateHeaders: Effect.Effect<RotationCounts, CredentialUnavailable, CredentialKeys | AgentsRepo> = Effect.gen(
  function*() {
    const repo = yield* AgentsRepo
    return yield* resealAll(yield* repo.allMcpHeaders, {
      sealed: (row) => row.sealed,
      owner: (row) => ownerOf(row.agent, row.server),
      name: (row) => `${row.agent}/${row.server}`,
      replace: (row, sealed, previousKeyId) => repo.resealMcpHeaders({ ...row, sealed }, previousKeyId)
    })
  }
).pipe(Effect.withSpan("McpHeaders.rotate"))
