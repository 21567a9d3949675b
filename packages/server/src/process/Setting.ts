/**
 * A setting: what its variable accepts (`SettingRule.ts`) and how its feature
 * reads it, in one value. The feature yields `config`; the start-up check
 * (`system/Settings.ts`) runs the rule and then the same `config` on the
 * environment, so a value the feature could not read never gets past the
 * start, whatever the rule forgot.
 */
import { Config, Option, Schema } from "effect"
import { wholeNumber } from "./Accepts.ts"
import type { SettingRule } from "./SettingRule.ts"
import { settingRule } from "./SettingRule.ts"

export interface Setting<A> extends SettingRule {
  /** The value as the feature uses it, its default when unset, from the current ConfigProvider (tests swap it). */
  readonly config: Config.Config<A>
}

/** `read` is given the variable's name, so that it is written once. */
export const setting = <A>(rule: SettingRule, read: (name: string) => Config.Config<A>): Setting<A> =>
  settingRule({ ...rule, config: read(rule.name) })

export const hasConfig = (rule: SettingRule): rule is Setting<unknown> => "config" in rule

/** Blank or unset: undefined; else trimmed (how the providers package reads its own variables, too). */
export const optionalText = (name: string): Config.Config<string | undefined> =>
  Config.option(Config.String(name)).pipe(
    Config.map((value) => Option.isSome(value) && value.value.trim() !== "" ? value.value.trim() : undefined)
  )

/** A whole number of at least 1, as the limits read theirs. */
export const positiveInt = (name: string): Config.Config<number> =>
  Config.schema(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)), name)

/** A whole number from `min` to `max`, `fallback` when unset. */
export const wholeNumberSetting = (
  name: string,
  expected: string,
  range: { readonly min: number; readonly max?: number },
  fallback: number
): Setting<number> =>
  setting({ name, expected, accepts: wholeNumber(range.min, range.max) }, (variable) => Config.Int(variable).pipe(Config.withDefault(fallback)))
