/**
 * The schema's migrations, listed in code rather than read from a folder so
 * the same list runs from TypeScript sources and from a build, and tests can
 * count them. Ids only ever grow: a shipped migration is never edited.
 */
import { PgMigrator } from "@effect/sql-pg"
import { Layer } from "effect"
import * as NodeServices from "@effect/platform-node/NodeServices"
import chats from "./migrations/0001_chats.ts"
import planner from "./migrations/0002_planner.ts"
import jobs from "./migrations/0003_jobs.ts"
import retentionKeyset from "./migrations/0004_retention_keyset.ts"
import hostRevocationTaskCancel from "./migrations/0005_host_revocation_task_cancel.ts"
import chatGeneration from "./migrations/0006_chat_generation.ts"
import jobKindUnchecked from "./migrations/0007_job_kind_unchecked.ts"
import agents from "./migrations/0008_agents.ts"
import turnChunks from "./migrations/0009_turn_chunks.ts"
import usage from "./migrations/0010_usage.ts"
import rateLimits from "./migrations/0011_rate_limits.ts"
import chatUsers from "./migrations/0012_chat_users.ts"
import usageUsers from "./migrations/0013_usage_users.ts"
import agentMcpHeaders from "./migrations/0014_agent_mcp_headers.ts"
import approvalDecisions from "./migrations/0015_approval_decisions.ts"
import subagentKinds from "./migrations/0016_subagent_kinds.ts"
import messageBytes from "./migrations/0017_message_bytes.ts"

export const migrations = {
  "0001_chats": chats,
  "0002_planner": planner,
  "0003_jobs": jobs,
  "0004_retention_keyset": retentionKeyset,
  "0005_host_revocation_task_cancel": hostRevocationTaskCancel,
  "0006_chat_generation": chatGeneration,
  "0007_job_kind_unchecked": jobKindUnchecked,
  "0008_agents": agents,
  "0009_turn_chunks": turnChunks,
  "0010_usage": usage,
  "0011_rate_limits": rateLimits,
  "0012_chat_users": chatUsers,
  "0013_usage_users": usageUsers,
  "0014_agent_mcp_headers": agentMcpHeaders,
  "0015_approval_decisions": approvalDecisions,
  "0016_subagent_kinds": subagentKinds,
  "0017_message_bytes": messageBytes
}

export const migrationCount = Object.keys(migrations).length

/** Applies pending migrations; the migrator's table lock makes concurrent replicas take turns. */
export const layer = PgMigrator.layer({ loader: PgMigrator.fromRecord(migrations) }).pipe(
  Layer.provide(NodeServices.layer)
)
