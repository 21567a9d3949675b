/**
 * What one environment variable accepts, declared once beside the feature
 * that reads it (with its reading: `Setting.ts`) and held to at start by the
 * one list of every feature's settings (`system/Settings.ts`). Free of
 * Effect: `main.ts` checks V8's settings with it before any module that
 * builds a schema is loaded.
 */
import { invalidSetting } from "./InvalidSetting.ts"

export type Env = Readonly<Record<string, string | undefined>>

export interface SettingRule {
  readonly name: string
  /** What the variable accepts, as the refusal says it; absent: any value. */
  readonly expected?: string
  /** Whether `value` is accepted; `env` for settings that depend on another one. */
  readonly accepts?: (value: string, env: Env) => boolean | { readonly problem: string }
  /** A blank value means unset (the provider's and the sub-agents' variables, the credentials). */
  readonly blankIsUnset?: boolean
  /** A credential: a refusal never shows its value. */
  readonly secret?: boolean
}

// Every rule declared, whichever module declared it: what the test of the start-up list compares it with.
const declared: Array<SettingRule> = []

export const settingRule = <R extends SettingRule>(rule: R): R => {
  declared.push(rule)
  return rule
}

/** The rules of every module loaded so far. */
export const declaredRules = (): ReadonlyArray<SettingRule> => declared

/** Whether `env` leaves the variable unset: absent, or blank where blank means unset. */
export const isUnset = (rule: SettingRule, env: Env): boolean => {
  const value = env[rule.name]
  return value === undefined || (rule.blankIsUnset === true && value.trim() === "")
}

/** The line refusing `env`'s value of the variable, as `invalidSetting` words it. */
export const refusalLine = (rule: SettingRule, env: Env, expected: string | undefined, problem?: string): string =>
  invalidSetting(rule.name, env[rule.name] ?? "", expected ?? "another value", {
    ...(rule.secret === true ? { secret: true } : {}),
    ...(problem === undefined ? {} : { problem })
  })

/** The line refusing the variable's value in `env`; undefined when it is unset or accepted. */
export const ruleRefusal = (rule: SettingRule, env: Env): string | undefined => {
  if (rule.accepts === undefined || isUnset(rule, env)) return undefined
  const value = env[rule.name]!
  const verdict = rule.accepts(rule.blankIsUnset === true ? value.trim() : value, env)
  if (verdict === true) return undefined
  return refusalLine(rule, env, rule.expected, typeof verdict === "object" ? verdict.problem : undefined)
}
