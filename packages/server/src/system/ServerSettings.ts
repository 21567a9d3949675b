/**
 * The settings `Server.ts` reads itself: where it listens and how it logs
 * (docs/configuration.md). Here rather than there: the start-up list
 * (`Settings.ts`) holds them, and `Server.ts` is above every folder.
 */
import { Config } from "effect"
import type { LogLevel } from "effect"
import { notBlank, oneOf, wholeNumber } from "../process/Accepts.ts"
import { setting } from "../process/Setting.ts"

export const HostSetting = setting(
  { name: "HOST", expected: "a host name or IP address to listen on", accepts: notBlank },
  (name) => Config.String(name).pipe(Config.withDefault("127.0.0.1"))
)

export const PortSetting = setting(
  { name: "PORT", expected: "a port number from 1 to 65535", accepts: wholeNumber(1, 65535) },
  (name) => Config.Port(name).pipe(Config.withDefault(8787))
)

const LEVELS = {
  trace: "Trace", debug: "Debug", info: "Info", warn: "Warn", error: "Error", none: "None"
} as const satisfies Record<string, LogLevel.LogLevel>
const LEVEL_NAMES = Object.keys(LEVELS) as Array<keyof typeof LEVELS>

export const LogLevelSetting = setting(
  { name: "LOG_LEVEL", expected: LEVEL_NAMES.join(", "), accepts: oneOf(LEVEL_NAMES) },
  (name) => Config.Literals(LEVEL_NAMES, name).pipe(Config.withDefault("info"), Config.map((level): LogLevel.LogLevel => LEVELS[level]))
)

export const LogFormatSetting = setting(
  { name: "LOG_FORMAT", expected: "pretty or json", accepts: oneOf(["pretty", "json"]) },
  (name) => Config.Literals(["pretty", "json"], name).pipe(Config.withDefault("pretty"))
)
