/**
 * Shows what the agent is doing on stderr while a turn runs, by subscribing
 * to `agentStore`: one line rewritten in place on a terminal, one line per
 * change otherwise (a log a script can keep). stdout stays reserved for
 * answers, so `switchboard chat … > answer.txt` captures only the answer.
 * On a terminal, the line is cleared while the agent responds: the answer
 * streams there.
 */
import type { ExecutionStatus } from "@switchboard/domain"
import { Effect } from "effect"
import type { Scope } from "effect"
import type { AgentStore } from "@switchboard/client"

export interface StatusOutput {
  readonly isTTY: boolean
  readonly write: (text: string) => void
}

export const stderrOutput: StatusOutput = {
  isTTY: process.stderr.isTTY === true,
  write: (text) => {
    process.stderr.write(text)
  }
}

/** The status line for a state, or undefined when there is nothing to show (at rest). */
export const describeStatus = (status: ExecutionStatus, activeTool: string | null): string | undefined => {
  switch (status) {
    case "sending":
      return "sending to the model…"
    case "processing":
      return activeTool === null ? "running tools…" : `running tool ${activeTool}…`
    case "responding":
      return "responding…"
    case "idle":
    case "error":
      return undefined
  }
}

/** Reports status changes for as long as the scope is open. */
export const reportStatus = (
  store: AgentStore,
  output: StatusOutput = stderrOutput
): Effect.Effect<void, never, Scope.Scope> => {
  let shown: string | undefined
  const clear = () => {
    if (output.isTTY && shown !== undefined) output.write("\r\u001b[2K")
    shown = undefined
  }
  const show = (line: string | undefined) => {
    if (line === shown) return
    if (line === undefined) return clear()
    output.write(output.isTTY ? `\r\u001b[2K${line}` : `[switchboard] ${line}\n`)
    shown = line
  }
  return Effect.acquireRelease(
    Effect.sync(() =>
      store.subscribe((state) => {
        // Between two tools (and just before the first) no tool is active: keep the line rather than flicker.
        if (state.status === "processing" && state.activeTool === null && shown !== undefined) return
        show(output.isTTY && state.status === "responding" ? undefined : describeStatus(state.status, state.activeTool))
      })
    ),
    (unsubscribe) =>
      Effect.sync(() => {
        unsubscribe()
        clear()
      })
  ).pipe(Effect.asVoid)
}
