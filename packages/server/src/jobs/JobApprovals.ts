/**
 * The parked jobs' side of the approvals port (approvals/ParkedApprovals.ts):
 * a decision of a job's call is recorded by `JobParking.decide`, whose
 * statement notified every replica; this process's runner hears it at once.
 */
import { Effect, Layer } from "effect"
import { ParkedApprovals } from "../approvals/ParkedApprovals.ts"
import { JobParking } from "./JobParking.ts"
import { JobSignals } from "./JobSignals.ts"

export const layer = Layer.effect(ParkedApprovals, Effect.gen(function*() {
  const parking = yield* JobParking
  const signals = yield* JobSignals
  return {
    decide: (chatId, approvalId, decision) =>
      parking.decide(chatId, approvalId, decision).pipe(
        Effect.tap((outcome) => outcome === "decided" ? signals.run.local : Effect.void)
      )
  }
})).pipe(Layer.provide(JobParking.layer))
