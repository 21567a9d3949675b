/** `--server URL`, the same on every command that talks to a Switchboard server. */
import { Config } from "effect"
import { Flag } from "effect/cli"

export const defaultServer = "http://127.0.0.1:8787"

export const serverFlag = Flag.String("server").pipe(
  Flag.withDescription(`Server base URL (env SWITCHBOARD_SERVER, default ${defaultServer})`),
  Flag.withMetavar("URL"),
  Flag.withFallbackConfig(Config.String("SWITCHBOARD_SERVER")),
  Flag.withDefault(defaultServer)
)
