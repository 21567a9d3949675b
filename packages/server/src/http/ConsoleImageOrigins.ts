/**
 * `CONSOLE_IMAGE_ORIGINS`, read: the origins beyond its own the web console
 * may load an answer's images from (`WebConsole`: its Content-Security-Policy).
 */
import { Config, Option } from "effect"
import { setting } from "../process/Setting.ts"

/** What `CONSOLE_IMAGE_ORIGINS` accepts, as the refusal says it. */
export const CONSOLE_IMAGE_ORIGINS_EXPECTED =
  "a comma-separated list of http(s) origins such as https://images.example.com: scheme, host and an optional port, no path"

/** An origin as written: `http(s)://host[:port]`, a trailing `/` tolerated; no wildcard, user, path, query or fragment. */
const IMAGE_ORIGIN = /^https?:\/\/(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::\d{1,5})?\/?$/i

/**
 * `CONSOLE_IMAGE_ORIGINS`: the origins the web console may load a markdown image from (its own
 * origin always), normalized (`https://Images.example.com:443/` → `https://images.example.com`);
 * `undefined` when an entry is not such an origin. Blank entries are skipped.
 */
export const consoleImageOrigins = (value: string): ReadonlyArray<string> | undefined => {
  const origins: Array<string> = []
  for (const entry of value.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
    if (!IMAGE_ORIGIN.test(entry)) return undefined
    try {
      const origin = new URL(entry).origin
      if (!origins.includes(origin)) origins.push(origin)
    } catch {
      return undefined
    }
  }
  return origins
}

export const ConsoleImageOriginsSetting = setting({
  name: "CONSOLE_IMAGE_ORIGINS",
  expected: CONSOLE_IMAGE_ORIGINS_EXPECTED,
  accepts: (value) => consoleImageOrigins(value) !== undefined,
  blankIsUnset: true
}, (name) => Config.option(Config.String(name)).pipe(Config.map(Option.getOrElse(() => ""))))
