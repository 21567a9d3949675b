/**
 * A directory of sub-agent kinds (`switchboard admin subagents apply DIR`):
 * one file per kind, named for it — `summarize.yaml` defines the kind
 * `summarize` — each what `PUT /admin/subagents/{kind}` takes
 * (`SubagentBody`). `.json` files are read as JSON, `.yaml` and `.yml` as
 * YAML, as an agents file is; other files (a README) are not read. Every file
 * is checked against the domain's schema before anything is sent: an error
 * names the file and the path in it, an unknown key is an error, and so is a
 * file name that is no kind name or a kind given by two files.
 */
import { isKindName, SubagentBody } from "@switchboard/domain"
import { Effect, FileSystem } from "effect"
import * as path from "node:path"
import { CliFailure } from "./CliFailure.ts"
import { decodeDefinition, invalidFile, readDefinitionFile } from "./DefinitionFiles.ts"

const WHAT = "sub-agent file"
const EXTENSIONS: ReadonlyArray<string> = [".json", ".yaml", ".yml"]

export interface SubagentEntry {
  readonly name: string
  readonly file: string
  readonly body: SubagentBody
}

/** The kinds of `dir`, by file name, validated; fails with a `CliFailure` naming the directory or the file. */
export const loadSubagentsDir = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const names = yield* fs.readDirectory(dir).pipe(
      Effect.mapError((e) => new CliFailure({ message: `Cannot read sub-agents directory ${dir}: ${e.message}` }))
    )
    const files = names.filter((name) => !name.startsWith(".") && EXTENSIONS.includes(path.extname(name))).sort()
    if (files.length === 0) {
      return yield* Effect.fail(new CliFailure({
        message: `No sub-agent files in ${dir}: one .json, .yaml or .yml file per kind, named for the kind (summarize.yaml)`
      }))
    }
    const byKind = new Map<string, SubagentEntry>()
    for (const name of files) {
      const file = path.join(dir, name)
      const invalid = invalidFile(WHAT, file)
      const kind = path.basename(name, path.extname(name))
      if (!isKindName(kind)) {
        return yield* Effect.fail(invalid(`the file's name is the kind's: "${kind}" must be 1 to 32 of a-z, 0-9 and -`))
      }
      const twice = byKind.get(kind)
      if (twice !== undefined) return yield* Effect.fail(invalid(`kind "${kind}" is defined twice (also by ${twice.file})`))
      const body = yield* decodeDefinition(SubagentBody, yield* readDefinitionFile(WHAT, file), invalid)
      byKind.set(kind, { name: kind, file, body })
    }
    return [...byKind.values()]
  })
