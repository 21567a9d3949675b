/**
 * Sub-agent jobs (docs/jobs.md). One row per job, from the
 * job tool call that created it to the wake turn that delivered its steer.
 *
 * `phase` is the pipeline's own state, `status` the public one:
 * - `run`: the sub-agent is to run (or runs, under a lease); status `running`;
 * - `wake`: the result is stored, its steer waits in the chat's wake queue
 *   (ordered by `finished_at`); status still `running`;
 * - `settled`: the wake turn completed; status `done` or `error`.
 *
 * The lease (`lease_owner`, `lease_expires_at`) is what a runner or a wake
 * holds while it works; an expired lease means its holder died, and the
 * stale-job sweep lets another replica re-enter the job. `wake_after` delays a
 * wake that found its chat busy (a turn in flight, an unanswered client call)
 * or whose turn failed; `wake_attempts` counts its claims, `wake_failures` the
 * turns that failed (a provider error).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE jobs (
    id text PRIMARY KEY,
    seq bigserial NOT NULL,
    chat_id text NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('research', 'demo', 'visual')),
    tool_call_id text NOT NULL,
    input jsonb NOT NULL,
    context jsonb,
    phase text NOT NULL DEFAULT 'run' CHECK (phase IN ('run', 'wake', 'settled')),
    status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done', 'error')),
    activity text NOT NULL DEFAULT '',
    result jsonb,
    error text,
    lease_owner text,
    lease_expires_at timestamptz,
    run_attempts int NOT NULL DEFAULT 0,
    wake_attempts int NOT NULL DEFAULT 0,
    wake_failures int NOT NULL DEFAULT 0,
    wake_after timestamptz NOT NULL DEFAULT now(),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
  )`
  yield* sql`CREATE INDEX jobs_chat_idx ON jobs (chat_id, seq)`
  // The runner's and the wake's claims scan only unsettled jobs.
  yield* sql`CREATE INDEX jobs_pending_idx ON jobs (phase, finished_at, seq) WHERE phase <> 'settled'`
})
