/**
 * Where the terminal keeps its state between runs: the stores' storage port
 * (`StateStorage`) over JSON files in a state directory. Synchronous, like
 * every storage of the stores (see the client's StateStorage).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { StateStorage } from "zustand/middleware"

/** The state directory: `$SWITCHBOARD_HOME`, else `~/.switchboard`. */
export const stateDirectory = (env: Readonly<Record<string, string | undefined>> = process.env): string => {
  const home = env["SWITCHBOARD_HOME"]
  return home !== undefined && home !== "" ? path.resolve(home) : path.join(os.homedir(), ".switchboard")
}

/** Store names become file names: keep them to a safe alphabet so a name can never escape the directory. */
const fileOf = (dir: string, name: string): string => path.join(dir, `${name.replace(/[^A-Za-z0-9_.-]/g, "_")}.json`)

/**
 * One `<name>.json` file per store in `dir` (created on first write). Writes
 * go through a temporary file and a rename, so a crash mid-write leaves the
 * previous state intact instead of a truncated file.
 */
export const fileStorage = (dir: string): StateStorage<void> => ({
  getItem: (name) => {
    try {
      return fs.readFileSync(fileOf(dir, name), "utf8")
    } catch (error) {
      if (isNotFound(error)) return null
      throw error
    }
  },
  setItem: (name, value) => {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const file = fileOf(dir, name)
    const tmp = `${file}.${process.pid}.tmp`
    fs.writeFileSync(tmp, value, { encoding: "utf8", mode: 0o600 })
    fs.renameSync(tmp, file)
  },
  removeItem: (name) => {
    fs.rmSync(fileOf(dir, name), { force: true })
  }
})

const isNotFound = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && error.code === "ENOENT"
