/**
 * `DEFAULT_AGENT`: the agent of a turn that names none (docs/agents.md). Only
 * its shape is checked at start; whether such an agent exists is each turn's
 * to say (404 `agent_not_found` until an operator defines it).
 */
import { BUILT_IN_AGENT } from "@switchboard/domain"
import { Config } from "effect"
import { optionalText, setting } from "../process/Setting.ts"

export const DefaultAgentSetting = setting({
  name: "DEFAULT_AGENT",
  expected: "an agent name: 1 to 64 of a-z, 0-9, - and _ (default media-editor)",
  accepts: (value) => /^[a-z0-9_-]{1,64}$/.test(value),
  blankIsUnset: true
}, (name) => optionalText(name).pipe(Config.map((agent) => agent ?? BUILT_IN_AGENT)))
