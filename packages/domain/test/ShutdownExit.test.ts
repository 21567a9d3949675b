/**
 * The exit code a shutdown ends with (ShutdownExit.ts): 0 only for an
 * interruption a signal asked for; runMain's defaults otherwise.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Exit } from "effect"
import { shutdownTeardown } from "../src/ShutdownExit.ts"

const codeOf = (exit: Exit.Exit<unknown, unknown>, signalled: boolean) => {
  let code: number | undefined
  shutdownTeardown(() => signalled)(exit, (c) => void (code = c))
  return code
}

describe("the exit code after a shutdown", () => {
  it("a signal's interruption, nothing else: 0", () => {
    assert.strictEqual(codeOf(Exit.interrupt(1), true), 0)
  })
  it("an interruption no signal asked for keeps runMain's 130", () => {
    assert.strictEqual(codeOf(Exit.interrupt(1), false), 130)
  })
  it("a failure — a failed start, or a finalizer that failed during the shutdown — is non-zero, signal or not", () => {
    assert.strictEqual(codeOf(Exit.fail(new Error("ServeError")), false), 1)
    const failedFinalizer = Exit.failCause(Cause.combine(Cause.interrupt(1), Cause.die(new Error("release failed"))))
    assert.strictEqual(codeOf(failedFinalizer, true), 1)
  })
  it("a program that simply ends: 0", () => {
    assert.strictEqual(codeOf(Exit.void, false), 0)
  })
})
