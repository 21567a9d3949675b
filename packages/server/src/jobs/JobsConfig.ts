/**
 * The job pipeline's settings, from the environment.
 *
 * | variable          | default  | meaning                                                            |
 * | ----------------- | -------- | ------------------------------------------------------------------ |
 * | `JOB_CONCURRENCY` | 4        | sub-agents running at once in this server                          |
 * | `JOB_TIMEOUT_MS`  | 600000   | one job's time limit; past it the job ends in the failure shape    |
 * | `JOB_LEASE_MS`    | 30000    | a runner's (or wake's) lease, renewed at a third of it; a replica  |
 * |                   |          | killed mid-job is taken over this long after its last renewal (one |
 * |                   |          | stopped with SIGTERM gives its jobs back at once)                  |
 * | `JOB_SWEEP_MS`    | 1000     | the stale-job sweep (expired leases, deferred wakes): the backstop |
 * |                   |          | of the notifications, which are what makes completions fast        |
 * | `JOB_MAX_ACTIVE_PER_CHAT` | 16 | sub-agents one chat has at work at once (read by the job tools)  |
 * | `APPROVAL_TIMEOUT`| 24 hours | how long a parked job waits for the user's decision before its     |
 * |                   |          | call is denied (docs/subagents.md)                                 |
 *
 * `JOB_MODEL_RESEARCH`, `JOB_MODEL_DEMO` and `JOB_MODEL_VISUAL` are the
 * sub-agents' (`subagents/SubagentConfig.ts`). An invalid value stops `npm start`
 * (`system/Settings.ts`); the fallback below only serves callers that bypass
 * that check (tests with their own ConfigProvider).
 */
import { Config, Context, Duration, Effect, Layer, Option } from "effect"
import { MILLISECONDS, POSITIVE } from "../process/Accepts.ts"
import type { Setting } from "../process/Setting.ts"
import { optionalText, setting, wholeNumberSetting } from "../process/Setting.ts"

export interface JobsSettings {
  readonly concurrency: number
  readonly timeoutMs: number
  readonly leaseMs: number
  readonly sweepMs: number
  /**
   * Runs of one job (each one ended by a dead runner) before it ends in the failure shape. A run
   * given back at a graceful shutdown does not count.
   */
  readonly maxRuns: number
  /** Wake turns of one job that failed (provider errors) before it settles without an answer. */
  readonly maxWakes: number
  /** How long a parked job waits for a decision (`APPROVAL_TIMEOUT`) before its call is denied. */
  readonly approvalTimeoutMs: number
}

export const defaultJobsSettings: JobsSettings = {
  concurrency: 4,
  timeoutMs: 600_000,
  leaseMs: 30_000,
  sweepMs: 1_000,
  maxRuns: 3,
  maxWakes: 5,
  approvalTimeoutMs: 24 * 60 * 60 * 1000
}

export const JobConcurrencySetting = wholeNumberSetting("JOB_CONCURRENCY", POSITIVE, { min: 1 }, defaultJobsSettings.concurrency)
export const JobTimeoutMsSetting = wholeNumberSetting("JOB_TIMEOUT_MS", MILLISECONDS, { min: 1 }, defaultJobsSettings.timeoutMs)
export const JobLeaseMsSetting = wholeNumberSetting("JOB_LEASE_MS", MILLISECONDS, { min: 1 }, defaultJobsSettings.leaseMs)
export const JobSweepMsSetting = wholeNumberSetting("JOB_SWEEP_MS", MILLISECONDS, { min: 1 }, defaultJobsSettings.sweepMs)
/**
 * `JOB_MAX_ACTIVE_PER_CHAT`: the most sub-agents one chat has at work (dispatched, their results not
 * yet delivered); a call past it is answered with an error the model reads, and no job is made. A
 * model that calls a job tool a thousand times in one answer starts sixteen, not a thousand.
 */
export const JobMaxActivePerChatSetting = wholeNumberSetting("JOB_MAX_ACTIVE_PER_CHAT", POSITIVE, { min: 1 }, 16)

/** `24 hours`, `30 minutes`, `90 seconds`, `500 millis` (Effect's duration words), or a whole number of milliseconds. */
export const durationMs = (raw: string): number | undefined => {
  const text = raw.trim()
  if (/^\d+$/.test(text)) return Number(text) > 0 ? Number(text) : undefined
  const parsed = Duration.fromInput(text as Duration.Input)
  if (Option.isNone(parsed)) return undefined
  const ms = Duration.toMillis(parsed.value)
  return Number.isFinite(ms) && ms > 0 ? ms : undefined
}

export const ApprovalTimeoutSetting = setting({
  name: "APPROVAL_TIMEOUT",
  expected: "a duration such as 24 hours, 30 minutes or 90 seconds (or a whole number of milliseconds)",
  accepts: (value) => durationMs(value) !== undefined,
  blankIsUnset: true
}, (name) => optionalText(name).pipe(Config.map((raw) => raw === undefined ? defaultJobsSettings.approvalTimeoutMs : durationMs(raw) ?? defaultJobsSettings.approvalTimeoutMs)))

const positive = (variable: Setting<number>, fallback: number) =>
  variable.config.pipe(
    Effect.flatMap((n) => n > 0 ? Effect.succeed(n) : Effect.fail(new Error(`${variable.name} must be positive`))),
    Effect.catch((e) => Effect.logWarning(`${variable.name}: invalid value, using ${fallback}`, e).pipe(Effect.as(fallback)))
  )

export class JobsConfig extends Context.Service<JobsConfig, JobsSettings>()("switchboard/server/jobs/JobsConfig") {
  static readonly layer = Layer.effect(JobsConfig, Effect.gen(function*() {
    return JobsConfig.of({
      ...defaultJobsSettings,
      concurrency: yield* positive(JobConcurrencySetting, defaultJobsSettings.concurrency),
      timeoutMs: yield* positive(JobTimeoutMsSetting, defaultJobsSettings.timeoutMs),
      leaseMs: yield* positive(JobLeaseMsSetting, defaultJobsSettings.leaseMs),
      sweepMs: yield* positive(JobSweepMsSetting, defaultJobsSettings.sweepMs),
      approvalTimeoutMs: yield* ApprovalTimeoutSetting.config.pipe(Effect.orElseSucceed(() => defaultJobsSettings.approvalTimeoutMs))
    })
  }))

  static readonly layerTest = (settings: Partial<JobsSettings>) =>
    Layer.succeed(JobsConfig, JobsConfig.of({ ...defaultJobsSettings, ...settings }))
}
