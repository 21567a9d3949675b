/**
 * The settings `main.ts` applies before the server's modules are loaded:
 * V8's flags (`V8Tuning.ts`) and Effect's Schema JIT compiler, which must be
 * installed before any schema is built. Rules only, free of Effect, for that
 * reason: nothing reads them through a `Config`.
 */
import { ON_OFF, oneOf, wholeNumber } from "../process/Accepts.ts"
import { settingRule } from "../process/SettingRule.ts"

export const SchemaJitRule = settingRule({ name: "SCHEMA_JIT", expected: ON_OFF.join(" or "), accepts: oneOf(ON_OFF) })

export const PretenuringRule = settingRule({ name: "PRETENURING", expected: ON_OFF.join(" or "), accepts: oneOf(ON_OFF) })

export const HeapGrowingPercentRule = settingRule({
  name: "HEAP_GROWING_PERCENT",
  expected: "a whole number of percent, 0 to 9999; 0: V8's own growth",
  accepts: wholeNumber(0, 9999)
})
