/**
 * The chat provider's variables (docs/configuration.md, Chat provider). The
 * providers package reads them itself (`ProviderConfig.ts`: it serves a host
 * agent too, which has no start-up check) and only reports a bad value as
 * 502 `provider_not_configured`; these rules refuse it at start instead. The
 * server's own code reads two of them: the marker's life (`LLM_TIMEOUT_MS`)
 * and the sub-agents' default model (`LLM_MODEL`).
 */
import { DEFAULT_MAX_RESPONSE_BYTES, MAX_MAX_RESPONSE_BYTES, MIN_MAX_RESPONSE_BYTES, providerNames, transportKinds } from "@switchboard/providers"
import { Config } from "effect"
import { accessSync, constants, statSync } from "node:fs"
import { resolve } from "node:path"
import type { Env } from "../process/SettingRule.ts"
import { settingRule } from "../process/SettingRule.ts"
import { httpUrl, MILLISECONDS, oneOf, POSITIVE, wholeNumber } from "../process/Accepts.ts"
import { optionalText, setting } from "../process/Setting.ts"

/** With the scripted provider, its script must be a file the server can read. */
const scriptFile = (value: string, env: Env) => {
  if (env["LLM_PROVIDER"]?.trim() !== "scripted") return true
  const path = resolve(value.trim())
  try {
    if (!statSync(path).isFile()) return { problem: `${path} is not a file` }
    accessSync(path, constants.R_OK)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return { problem: `the file ${path} cannot be read${code === undefined ? "" : ` (${code})`}` }
  }
}

export const LlmProviderRule = settingRule({
  name: "LLM_PROVIDER",
  expected: providerNames.join(", "),
  accepts: oneOf(providerNames),
  blankIsUnset: true
})

export const LlmModelSetting = setting({ name: "LLM_MODEL", blankIsUnset: true }, optionalText)

export const LlmApiKeyRule = settingRule({ name: "LLM_API_KEY", secret: true, blankIsUnset: true })

export const LlmBaseUrlRule = settingRule({
  name: "LLM_BASE_URL",
  expected: "an http(s) URL such as https://api.openai.com/v1",
  accepts: httpUrl,
  blankIsUnset: true
})

// The provider reports a value it cannot use; the marker's life then counts the provider's default.
export const LlmTimeoutMsSetting = setting(
  { name: "LLM_TIMEOUT_MS", expected: MILLISECONDS, accepts: wholeNumber(1), blankIsUnset: true },
  (name) => Config.Int(name).pipe(Config.withDefault(60_000), Config.orElse(() => Config.succeed(60_000)))
)

export const LlmTransportRule = settingRule({
  name: "LLM_TRANSPORT",
  expected: transportKinds.join(" or "),
  accepts: oneOf(transportKinds),
  blankIsUnset: true
})

export const LlmTranscriptionModelRule = settingRule({ name: "LLM_TRANSCRIPTION_MODEL", blankIsUnset: true })

export const LlmMaxTokensRule = settingRule({ name: "LLM_MAX_TOKENS", expected: POSITIVE, accepts: wholeNumber(1), blankIsUnset: true })

// Read by the planner's provider pools too: it bounds every provider answer the server reads.
export const LlmMaxResponseBytesRule = settingRule({
  name: "LLM_MAX_RESPONSE_BYTES",
  expected: `a whole number of bytes from ${MIN_MAX_RESPONSE_BYTES} to ${MAX_MAX_RESPONSE_BYTES} (default ${DEFAULT_MAX_RESPONSE_BYTES}, 4 MiB)`,
  accepts: wholeNumber(MIN_MAX_RESPONSE_BYTES, MAX_MAX_RESPONSE_BYTES),
  blankIsUnset: true
})

export const LlmScriptRule = settingRule({
  name: "LLM_SCRIPT",
  expected: "the path of a readable script file",
  accepts: scriptFile,
  blankIsUnset: true
})
