/**
 * A task created for a host while the host is being revoked (docs/planner.md): either the task was
 * created first — and the revocation re-queues it, its reservation dropped — or the host is revoked
 * first and the task is refused as reserved for a revoked host; never a task reserved for a revoked
 * host, which no host could ever claim. The race is made to happen (`raceUnderLock`): the revocation
 * is held uncommitted while the other replica's create waits on the host's row. PostgreSQL only.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { HostsRepo } from "../../src/hosts/HostsRepo.ts"
import { TasksRepo } from "../../src/hosts/TasksRepo.ts"
import { raceUnderLock, twoReplicas } from "../support/LockRace.ts"
import { backend } from "../support/TestDatabase.ts"

describe(`a task reserved for a host being revoked (${backend})`, () => {
  it.live.skipIf(backend !== "postgres")("the create that waited on the revocation is refused; nothing is left reserved for the revoked host", () =>
    Effect.gen(function*() {
      const { first, second, sql } = yield* twoReplicas(Layer.mergeAll(HostsRepo.layer, TasksRepo.layer))
      const { hostId } = yield* Context.get(first, HostsRepo).create("h-revoked")
      const outcome = yield* raceUnderLock({
        sql,
        first: Context.get(first, HostsRepo).revoke(hostId),
        then: Effect.void,
        second: Context.get(second, TasksRepo).create("a goal for the revoked host", hostId),
        waitsIn: "INSERT INTO tasks"
      })
      assert.strictEqual(outcome.second, "revoked")
      const reserved = yield* sql<{ id: string }>`SELECT id FROM tasks WHERE reserved_host_id = ${hostId}`
      assert.deepStrictEqual(reserved, [])
    }).pipe(Effect.scoped), { timeout: 30_000 })
})
