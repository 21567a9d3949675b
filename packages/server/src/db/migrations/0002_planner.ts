/**
 * The host control plane and the planner proxy (docs/planner.md).
 *
 * - `hosts`: a host's token is never stored, only its SHA-256 (the token is 32
 *   random bytes: a fast hash is enough, nothing to brute-force).
 * - `tasks`: the queue. `status` / `attempt` / `lease_expires_at` are the
 *   claim state; a running task whose lease has passed is claimable again (the
 *   claim statement itself bumps `attempt`, so no sweeper is needed for
 *   correctness). `next_step_index` hands out the planner step indexes of the
 *   current attempt (reset by each claim). `seq` orders the queue.
 * - `provider_profiles`: the API key sealed with AES-256-GCM (ciphertext,
 *   nonce, tag) under the key named by `credential_key_id`, the profile id as
 *   associated data; at most one row active, enforced by a partial unique index.
 * - `planner_decisions`: one row per resolved step, unique per
 *   `(task_id, attempt, step_index)`. `task_terminal_at` is copied from the task
 *   when it ends, so the retention sweep is a range scan over its own partial
 *   index, however many rows the table holds.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE hosts (
    id text PRIMARY KEY,
    name text NOT NULL,
    token_hash bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_heartbeat_at timestamptz
  )`
  yield* sql`CREATE TABLE tasks (
    id text PRIMARY KEY,
    seq bigserial NOT NULL UNIQUE,
    goal text NOT NULL,
    reserved_host_id text REFERENCES hosts (id),
    host_id text REFERENCES hosts (id),
    status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    attempt integer NOT NULL DEFAULT 1 CHECK (attempt >= 1),
    lease_expires_at timestamptz,
    next_step_index integer NOT NULL DEFAULT 0,
    output jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    terminal_at timestamptz,
    CHECK ((status IN ('succeeded', 'failed')) = (terminal_at IS NOT NULL)),
    CHECK (status <> 'running' OR (host_id IS NOT NULL AND lease_expires_at IS NOT NULL))
  )`
  // The claim scans only the tasks that can still be claimed, oldest first.
  yield* sql`CREATE INDEX tasks_claimable_idx ON tasks (seq) WHERE status IN ('queued', 'running')`
  yield* sql`CREATE INDEX tasks_host_idx ON tasks (host_id, seq)`
  yield* sql`CREATE TABLE provider_profiles (
    id text PRIMARY KEY,
    name text NOT NULL UNIQUE,
    provider text NOT NULL CHECK (provider IN ('openai-compatible', 'anthropic')),
    model text NOT NULL,
    timeout_ms integer NOT NULL CHECK (timeout_ms > 0),
    base_url text NOT NULL,
    api_key_ciphertext bytea NOT NULL,
    api_key_nonce bytea NOT NULL,
    api_key_tag bytea NOT NULL,
    credential_key_id text NOT NULL,
    active boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE UNIQUE INDEX provider_profiles_one_active_idx ON provider_profiles (active) WHERE active`
  yield* sql`CREATE TABLE planner_decisions (
    id bigserial PRIMARY KEY,
    task_id text NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    attempt integer NOT NULL,
    step_index integer NOT NULL,
    system_prompt text NOT NULL,
    user_prompt text NOT NULL,
    tool_name text NOT NULL,
    arguments jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    task_terminal_at timestamptz,
    UNIQUE (task_id, attempt, step_index)
  )`
  yield* sql`CREATE INDEX planner_decisions_retention_idx ON planner_decisions (task_terminal_at)
    WHERE task_terminal_at IS NOT NULL`
})
