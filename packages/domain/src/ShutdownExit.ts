/**
 * The process's exit code after a shutdown. `NodeRuntime.runMain` interrupts
 * the server on SIGTERM or SIGINT, and its default teardown
 * (`Runtime.defaultTeardown`) reads an interruption as 130, which process
 * managers (systemd, Kubernetes, pm2) report as a crash. A shutdown a signal
 * asked for that ended with nothing but that interruption — every finalizer
 * ran without failing: jobs given back, the database closed — exits 0.
 * Everything else keeps the default: a failed start (a taken port, a bad
 * setting, no database) or a finalizer that failed exits non-zero.
 *
 * Process plumbing, not vocabulary: it lives in the domain because both entry
 * points that run under process managers need it — the server's `main.ts` and
 * the CLI's `bin.ts` (`serve`, `host run`) — and the domain is the one package
 * both already depend on (the providers would be a detour the CLI needs for
 * nothing else; the server would make the CLI import it eagerly). `process` is
 * touched only when `watchShutdownSignals` is called, so the browser bundles
 * that take the domain are unaffected.
 */
import { Cause, Exit, Runtime } from "effect"

/** `signalled` tells whether a shutdown signal arrived (the interruption was asked for). */
export const shutdownTeardown = (signalled: () => boolean): Runtime.Teardown => (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) && signalled()
    ? onExit(0)
    : Runtime.defaultTeardown(exit, onExit)

/** Records whether SIGTERM or SIGINT arrived; runMain's own listeners do the interrupting. */
export const watchShutdownSignals = (): (() => boolean) => {
  let signalled = false
  const mark = () => {
    signalled = true
  }
  process.once("SIGTERM", mark)
  process.once("SIGINT", mark)
  return () => signalled
}
