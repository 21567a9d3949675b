/**
 * The run's scratch database on the PostgreSQL of `DATABASE_URL`: the one the servers and their
 * floors use, one at a time, so that whoever ends the run (`main`, or Ctrl+C) has the one to drop.
 * `scratchUrl` is a live binding: read where a server or a floor starts, it is the current one.
 */
import { createScratchDatabase } from "./scratch.ts"
import type { ScratchDatabase } from "./scratch.ts"
import { databaseUrl } from "./options.ts"

let scratch: ScratchDatabase | undefined
/** The current scratch database's URL (`undefined` until one is made). */
export let scratchUrl: string | undefined

export const createScratch = async () => {
  scratch = await createScratchDatabase(databaseUrl!)
  scratchUrl = scratch.url
}

/** A fresh scratch database (dropped and created again), for a case that must not read an earlier one's rows. */
export async function freshScratchDatabase() {
  await dropScratchDatabase()
  await createScratch()
  return scratchUrl!
}

export async function dropScratchDatabase() {
  const dropping = scratch
  scratch = undefined
  await dropping?.drop()
}
