/**
 * `switchboard chat` and the sub-agent jobs it follows that park on a call needing the user's
 * approval (docs/subagents.md, "Approvals inside a job"): each approval asked once, in the order
 * the watch found them, with a turn's question and answer rules (ApprovalPrompt.ts), and decided
 * with the chat's approval route, as a turn's (`ChatTransport.decide`). The job then resumes on
 * the server and the watch follows it to its result. A decision taken elsewhere first (in the
 * console) is no failure: it is said on stderr, and the job is followed all the same.
 */
import { ChatTransport } from "@switchboard/client"
import type { JobEvent } from "@switchboard/client"
import type { JobRecord, JobWaitingFor } from "@switchboard/domain"
import { Effect } from "effect"
import { approvalAnswer, jobApprovalQuestion } from "./ApprovalPrompt.ts"
import { jobLabel } from "./JobLines.ts"

interface Parked {
  readonly job: JobRecord
  readonly waitingFor: JobWaitingFor
}

export interface JobApprovals {
  /** Follows the watch's events: a new approval joins the queue; one its job no longer waits on leaves it. */
  readonly track: (event: JobEvent) => Effect.Effect<void>
  /** Puts the first approval's question on stderr, unless it is there already. */
  readonly ask: Effect.Effect<void>
  /** Whether a question is on screen: the next line answers it. */
  readonly asking: () => boolean
  /** The answer to the question on screen (`undefined`: stdin ended, which denies), sent. */
  readonly answer: (line: string | undefined) => Effect.Effect<void, never, ChatTransport>
  /** Decisions the server refused for another reason than a decision already taken. */
  readonly failures: () => number
}

export interface JobApprovalsOptions {
  /** The chat the jobs are of. */
  readonly chatId: () => string
  /** Writes on stderr, the line of a streamed answer ended first. */
  readonly write: (text: string) => void
}

export const makeJobApprovals = ({ chatId, write }: JobApprovalsOptions): JobApprovals => {
  /** Every approval ever queued: asked once, whatever later polls show. */
  const queued = new Set<string>()
  let queue: ReadonlyArray<Parked> = []
  /** The approval whose question is on screen. */
  let shown: string | undefined
  let failures = 0
  const say = (text: string) => Effect.sync(() => write(text))

  const track = (event: JobEvent): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (event.type !== "activity" && event.type !== "waiting" && event.type !== "settled") return Effect.void
      const { job } = event
      const current = job.status === "running" ? job.waitingFor : undefined
      const gone = queue.filter((p) => p.job.id === job.id && p.waitingFor.approvalId !== current?.approvalId)
      queue = queue.filter((p) => !gone.includes(p))
      if (current !== undefined && !queued.has(current.approvalId)) {
        queued.add(current.approvalId)
        queue = [...queue, { job, waitingFor: current }]
      }
      const dropped = gone.find((p) => p.waitingFor.approvalId === shown)
      if (dropped === undefined) return Effect.void
      shown = undefined
      return say(`\n${jobLabel(job)} ${dropped.waitingFor.toolName} was decided elsewhere\n`)
    })

  const ask = Effect.suspend(() => {
    const first = queue[0]
    if (first === undefined || shown === first.waitingFor.approvalId) return Effect.void
    shown = first.waitingFor.approvalId
    return say(jobApprovalQuestion(first.job, first.waitingFor))
  })

  const answer = (line: string | undefined) =>
    Effect.gen(function*() {
      const first = queue[0]
      if (first === undefined) return
      queue = queue.slice(1)
      shown = undefined
      const { approved, reason } = approvalAnswer(line)
      const transport = yield* ChatTransport
      const what = `${first.waitingFor.toolName} of ${jobLabel(first.job)}`
      yield* transport.decide(chatId(), first.waitingFor.approvalId, { approved, ...(reason === undefined ? {} : { reason }) }).pipe(
        Effect.catch((error) =>
          error.code === "approval_decided"
            ? say(`${jobLabel(first.job)} ${first.waitingFor.toolName} was already decided elsewhere; following the job\n`)
            : Effect.sync(() => void failures++).pipe(Effect.andThen(say(`switchboard: cannot decide ${what}: ${error.message}\n`)))
        )
      )
    })

  return {
    track,
    ask,
    asking: () => shown !== undefined && queue[0]?.waitingFor.approvalId === shown,
    answer,
    failures: () => failures
  }
}
