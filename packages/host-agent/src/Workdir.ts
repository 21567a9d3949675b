/**
 * The host agent's sandbox for files: every path a planner decision names is
 * resolved inside `--workdir`, or refused.
 *
 * Three ways out are closed: an absolute path (refused outright: paths are
 * relative to the workdir), `..` segments that climb above it (checked on the
 * lexical path), and symbolic links that point outside it (checked on the real
 * path: of the file itself when it exists, else of its deepest existing
 * ancestor, so a link to a directory outside cannot be written through either).
 * The check runs against the workdir's own real path, so a workdir that is
 * itself reached through a link (macOS `/tmp`) still works.
 */
import { Data, Effect } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"

export class WorkdirEscape extends Data.TaggedError("WorkdirEscape")<{
  readonly message: string
}> {}

/** `child` is `root` or inside it (both absolute, normalized). */
export const isInside = (root: string, child: string): boolean => {
  const relative = path.relative(root, child)
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}

const escape = (requested: string, why: string) =>
  new WorkdirEscape({ message: `path ${JSON.stringify(requested)} is refused: ${why}` })

const realpathOrUndefined = (p: string): Effect.Effect<string | undefined> =>
  Effect.promise(() => fs.realpath(p).catch(() => undefined))

const existsAsLink = (p: string): Effect.Effect<boolean> =>
  Effect.promise(() => fs.lstat(p).then(() => true, () => false))

/**
 * The real path of `p`, or of its deepest ancestor that exists (with the
 * missing rest appended); `undefined` when a component is a dangling symbolic
 * link, whose target (possibly outside) a write would create.
 */
const realpathOfExistingPart = (p: string): Effect.Effect<string | undefined> =>
  Effect.gen(function*() {
    let current = p
    const missing: Array<string> = []
    for (;;) {
      const real = yield* realpathOrUndefined(current)
      if (real !== undefined) return path.join(real, ...missing.reverse())
      if (yield* existsAsLink(current)) return undefined
      const parent = path.dirname(current)
      if (parent === current) return p
      missing.push(path.basename(current))
      current = parent
    }
  })

export interface Workdir {
  /** The workdir's real path. */
  readonly root: string
  /**
   * The real absolute path for `requested` (relative to the workdir), after
   * the escape checks; the file need not exist.
   */
  readonly resolve: (requested: string) => Effect.Effect<string, WorkdirEscape>
}

/** A workdir over `dir`, which must exist and be a directory. */
export const makeWorkdir = (dir: string): Effect.Effect<Workdir, WorkdirEscape> =>
  Effect.gen(function*() {
    const root = yield* Effect.tryPromise({
      try: async () => {
        const real = await fs.realpath(dir)
        if (!(await fs.stat(real)).isDirectory()) throw new Error("not a directory")
        return real
      },
      catch: (cause) =>
        new WorkdirEscape({ message: `workdir ${dir} is not a usable directory: ${cause instanceof Error ? cause.message : String(cause)}` })
    })
    const resolve = (requested: string): Effect.Effect<string, WorkdirEscape> =>
      Effect.gen(function*() {
        if (requested === "") return yield* Effect.fail(escape(requested, "the path is empty"))
        if (requested.includes("\u0000")) return yield* Effect.fail(escape(requested, "the path contains a NUL character"))
        if (path.isAbsolute(requested) || path.win32.isAbsolute(requested)) {
          return yield* Effect.fail(escape(requested, "absolute paths are not allowed; give a path relative to the workdir"))
        }
        const lexical = path.resolve(root, requested)
        if (!isInside(root, lexical)) return yield* Effect.fail(escape(requested, "it leads outside the workdir"))
        const real = yield* realpathOfExistingPart(lexical)
        if (real === undefined) {
          return yield* Effect.fail(escape(requested, "it goes through a dangling symbolic link"))
        }
        if (!isInside(root, real)) {
          return yield* Effect.fail(escape(requested, "it goes through a symbolic link that leads outside the workdir"))
        }
        return real
      })
    return { root, resolve }
  })
