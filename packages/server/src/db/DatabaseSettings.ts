/**
 * Which database the server uses and how it connects (`Database.ts`; docs/configuration.md).
 * Apart from `Database.ts` so that the start-up check loads no database driver.
 */
import { Config } from "effect"
import { NON_NEGATIVE, notBlank, POSITIVE } from "../process/Accepts.ts"
import { setting, wholeNumberSetting } from "../process/Setting.ts"

const postgresUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === "postgres:" || url.protocol === "postgresql:"
  } catch {
    return false
  }
}

/** Unset: the embedded PGlite under `DATA_DIR`. */
export const DatabaseUrlSetting = setting(
  { name: "DATABASE_URL", expected: "a postgres:// URL", accepts: postgresUrl, secret: true },
  (name) => Config.option(Config.Redacted(name))
)

export const DatabaseWaitSecondsSetting = wholeNumberSetting("DATABASE_WAIT_SECONDS", NON_NEGATIVE, { min: 0 }, 30)

// Per replica; PostgreSQL's own max_connections bounds the sum over replicas.
export const DatabaseMaxConnectionsSetting = wholeNumberSetting("DATABASE_MAX_CONNECTIONS", POSITIVE, { min: 1 }, 10)

export const DataDirSetting = setting(
  { name: "DATA_DIR", expected: "a directory path", accepts: notBlank },
  (name) => Config.String(name).pipe(Config.withDefault("./.switchboard"))
)
