/**
 * Whether the database is the embedded one: one session, one process (the
 * DATA_DIR lock). What needs a connection of its own (a `LISTEN`er) cannot
 * have one there, and what a real PostgreSQL would carry between replicas can
 * stay in the process.
 *
 * Its own module so that code asking the question does not load PGlite: on
 * PostgreSQL the embedded database's modules are never imported.
 */
import { Context } from "effect"

export const EmbeddedDatabase = Context.Reference<boolean>("switchboard/server/db/EmbeddedDatabase", {
  defaultValue: () => false
})
