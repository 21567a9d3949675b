/**
 * The one line an invalid setting gets: the variable, its
 * value and what it accepts, so an operator fixes it without reading a stack
 * trace. Every refusal to start goes through here — the settings checked
 * before anything starts (`Settings.ts`), V8's (`V8Tuning.ts`, checked before
 * any module is loaded, hence no import here), and the failures of a start
 * that got further (`StartupFailure.ts`).
 */

/** A value as it may be shown: quoted, one line, bounded. */
export const showValue = (value: string): string => {
  const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value
  return JSON.stringify(shown)
}

export interface InvalidSettingOptions {
  /** A credential: its value is never shown, only its length. */
  readonly secret?: boolean
  /** What is wrong beyond "not accepted" (a file that cannot be read). */
  readonly problem?: string
}

/** `invalid PORT "abc" (expected a port number from 1 to 65535)`. */
export const invalidSetting = (name: string, value: string, expected: string, options: InvalidSettingOptions = {}): string => {
  const shown = options.secret === true ? `(value hidden, ${value.length} characters)` : showValue(value)
  const problem = options.problem === undefined ? "" : `: ${options.problem.replace(/\s*\n\s*/g, " ")}`
  return `invalid ${name} ${shown}${problem} (expected ${expected})`
}

/** What the process prints, on stderr, before it exits non-zero. */
export const refusal = (reason: string): string => `Refusing to start: ${reason.replace(/\s*\n\s*/g, " ")}`
