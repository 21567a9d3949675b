/**
 * Handlers of the host routes: each first binds the authenticated host to the
 * host the request names (403 otherwise), then asks the repositories.
 *
 * `TASK_LEASE_SECONDS` (default 60) is how long a claim or a renewal holds a
 * task; a host agent renews well before it runs out.
 */
import { Api, CurrentHost, Forbidden, maxStoredValueBytes, PayloadTooLarge } from "@switchboard/domain"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { storedBytes } from "../db/StoredSize.ts"
import { wholeNumberSetting } from "../process/Setting.ts"
import { HostsRepo } from "./HostsRepo.ts"
import { TasksRepo } from "./TasksRepo.ts"

export const DEFAULT_LEASE_SECONDS = 60

export const TaskLeaseSecondsSetting = wholeNumberSetting(
  "TASK_LEASE_SECONDS",
  "a whole number of seconds from 1 to 86400",
  { min: 1, max: 86_400 },
  DEFAULT_LEASE_SECONDS
)

export const leaseMillis = TaskLeaseSecondsSetting.config.pipe(
  Effect.flatMap((s) => s >= 1 && s <= 86_400 ? Effect.succeed(s * 1000) : Effect.fail(new Error("out of range"))),
  Effect.catch(() =>
    Effect.logWarning(`TASK_LEASE_SECONDS must be 1 to 86400 seconds; using ${DEFAULT_LEASE_SECONDS}`).pipe(
      Effect.as(DEFAULT_LEASE_SECONDS * 1000)
    ))
)

/**
 * 413 for an output larger than a stored value may be: stored, it could not be read back (the driver
 * refuses a row over 16 MiB), and every task listing that carries it would fail.
 */
const storableOutput = (output: unknown) => {
  const bytes = storedBytes(output ?? null)
  return bytes <= maxStoredValueBytes ? Effect.void : Effect.fail(
    new PayloadTooLarge({ error: `Request body too large at output: ${bytes} bytes of JSON; a task stores at most ${maxStoredValueBytes}` })
  )
}

/** 403 unless the token's host is the one the request names. */
export const requireHost = (hostId: string) =>
  CurrentHost.use((current) =>
    current.hostId === hostId
      ? Effect.void
      : Effect.fail(new Forbidden({ error: `This host token belongs to another host than ${hostId}` })))

export const HostsHttp = HttpApiBuilder.group(Api, "hosts", Effect.fn(function*(handlers) {
  const hosts = yield* HostsRepo
  const tasks = yield* TasksRepo
  const leaseMs = yield* leaseMillis

  return handlers.handleAll({
    heartbeat: ({ params }) =>
      requireHost(params.hostId).pipe(
        Effect.andThen(hosts.heartbeat(params.hostId)),
        Effect.map((serverTime) => ({ serverTime }))
      ),
    claim: ({ params }) =>
      requireHost(params.hostId).pipe(
        Effect.andThen(tasks.claim(params.hostId, leaseMs)),
        Effect.map((task) => task === undefined ? undefined : { task })
      ),
    lease: ({ params, payload }) =>
      requireHost(payload.hostId).pipe(
        Effect.andThen(tasks.renew(params.taskId, payload.hostId, payload.attempt, leaseMs)),
        Effect.map((leaseExpiresAt) => ({ leaseExpiresAt }))
      ),
    result: ({ params, payload }) =>
      requireHost(payload.hostId).pipe(
        Effect.andThen(storableOutput(payload.output)),
        Effect.andThen(tasks.complete(params.taskId, payload.hostId, payload.attempt, payload.status, payload.output))
      )
  })
}))
