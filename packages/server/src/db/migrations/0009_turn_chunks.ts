/**
 * The chunks of running streamed turns (docs/streaming.md), where every
 * replica can read them: a client may resume or follow a turn on any replica,
 * whichever runs it. Written in batches by the running replica, read in
 * order by `seq`, deleted shortly after the turn is stored — a row lives for
 * the length of a turn. `chat_id` lets the sweep and a deleted chat find them.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE turn_chunks (
    turn_id text NOT NULL,
    seq integer NOT NULL,
    chat_id text NOT NULL,
    event text NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (turn_id, seq)
  )`
  yield* sql`CREATE INDEX turn_chunks_written_at ON turn_chunks (written_at)`
})
