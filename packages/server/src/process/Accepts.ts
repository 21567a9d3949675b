/**
 * The checks and the wordings settings share, so that two variables that
 * accept the same kind of value are refused in the same words. Free of
 * Effect, as `SettingRule.ts` is.
 */

const digits = (value: string) => /^\d{1,15}$/.test(value)

export const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) => (value: string) =>
  digits(value) && Number(value) >= min && Number(value) <= max

export const oneOf = (values: ReadonlyArray<string>) => (value: string) => values.includes(value)

export const notBlank = (value: string) => value.trim() !== ""

export const httpUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

export const POSITIVE = "a whole number above 0"
export const NON_NEGATIVE = "a whole number, 0 or more"
export const MILLISECONDS = "a whole number of milliseconds above 0"
export const PER_MINUTE = "a whole number of requests a minute above 0; unset: no limit"
export const ON_OFF = ["on", "off"]
