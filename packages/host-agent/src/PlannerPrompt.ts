/**
 * What the planner is told at each step. The system prompt is fixed; the user
 * prompt is rebuilt every step from the goal and the outcome of every step so
 * far (the planner keeps no memory between requests: the prompt is the whole
 * state). Each outcome is cut to `maxOutcomeChars` so thirty steps of file
 * contents still make a prompt of bounded size.
 */
export const systemPrompt = [
  "You are the planner of a host agent that carries out one task on a computer.",
  "At each step you choose exactly one action by calling exactly one of the tools offered.",
  "The agent executes it and shows you its outcome in the next step.",
  "File paths are relative to the agent's working directory.",
  "Call `finish` with a short summary once the goal is reached, or `fail` with the reason if it cannot be reached."
].join("\n")

export const maxOutcomeChars = 2000

export type StepOutcome =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly error: string }

export interface StepRecord {
  /** From 0, as the cloud's decision log numbers it (`stepIndex`), shown so to the planner and the operator. */
  readonly step: number
  readonly toolName: string
  readonly arguments: Readonly<Record<string, unknown>>
  readonly outcome: StepOutcome
}

export const clip = (text: string, max: number): string => text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters cut)` : text

const json = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? "null"
  } catch {
    return String(value)
  }
}

export const describeOutcome = (outcome: StepOutcome): string =>
  outcome.ok ? `ok: ${clip(json(outcome.result), maxOutcomeChars)}` : `error: ${clip(outcome.error, maxOutcomeChars)}`

export interface PromptInput {
  readonly goal: string
  readonly history: ReadonlyArray<StepRecord>
  /** The index of the step being decided, from 0 (the decision log's `stepIndex`). */
  readonly step: number
  readonly maxSteps: number
  /** Why the screenshot of this step is missing, when one was expected. */
  readonly screenshotNote?: string
}

export const userPrompt = (input: PromptInput): string => {
  const lines = [`Goal: ${input.goal}`, ""]
  if (input.history.length === 0) {
    lines.push("No step has been taken yet.")
  } else {
    lines.push("Steps so far:")
    for (const record of input.history) {
      lines.push(`${record.step}. ${record.toolName} ${clip(json(record.arguments), maxOutcomeChars)}`)
      lines.push(`   → ${describeOutcome(record.outcome)}`)
    }
  }
  lines.push("", `This is step ${input.step} (steps count from 0; at most ${input.maxSteps} steps). Choose the next action.`)
  if (input.screenshotNote !== undefined) lines.push(`(No screenshot this step: ${input.screenshotNote})`)
  return lines.join("\n")
}
