/**
 * What the `apply` commands of definitions share — agents (`AgentsFile.ts`)
 * and sub-agent kinds (`SubagentsDir.ts`): a file read as JSON (`.json`) or
 * YAML (any other extension), checked against the domain's schema before
 * anything is sent (an error names the file and the path in it, and an
 * unknown key is an error rather than a silently dropped setting); a plan
 * that makes applying idempotent — each definition is compared with the
 * server's and only the new or differing ones are written, a built-in one
 * refused; and the writing, one line per definition.
 *
 * MCP servers' header values are write-only (the server answers their names
 * only): a definition whose file gives them cannot be compared, so it is
 * written every time.
 */
import { givesHeaderValues, keptHeaderNames } from "@switchboard/domain"
import type { McpServerBody, McpServerView } from "@switchboard/domain"
import { Console, Effect, FileSystem, Schema } from "effect"
import * as YAML from "yaml"
import { printJson } from "./AdminClient.ts"
import { CliFailure } from "./CliFailure.ts"

const strict = { onExcessProperty: "error" } as const

/** Schema paths read as `agents[0].systemPrompt`, as a person writes them in the file. */
const readablePaths = (message: string): string =>
  message.replace(/\bat (\[[^\n]*\])/g, (_, path: string) =>
    "at " + path.replace(/\["([A-Za-z_$][\w$]*)"\]/g, ".$1").replace(/^\./, ""))

const isJson = (file: string) => file.endsWith(".json")

/** A failure naming the file: `Invalid <what> <file>: <why>`. */
export const invalidFile = (what: string, file: string) => (why: string) =>
  new CliFailure({ message: `Invalid ${what} ${file}: ${why}` })

/** The document of `file`, JSON for `.json` and YAML (a superset of JSON) for any other extension. */
export const readDefinitionFile = (what: string, file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((e) => new CliFailure({ message: `Cannot read ${what} ${file}: ${e.message}` }))
    )
    return yield* Effect.try({
      try: (): unknown => isJson(file) ? JSON.parse(text) : YAML.parse(text),
      catch: (e) => invalidFile(what, file)(`not ${isJson(file) ? "JSON" : "YAML"} (${e instanceof Error ? e.message : String(e)})`)
    })
  })

/** `document` decoded by `schema`, an unknown key refused; a mismatch is `invalid`'s failure, its paths readable. */
export const decodeDefinition = <A>(schema: Schema.Decoder<A>, document: unknown, invalid: (why: string) => CliFailure) =>
  Schema.decodeUnknownEffect(schema)(document, strict).pipe(Effect.mapError((e) => invalid(readablePaths(e.message))))

export type ApplyAction = "created" | "updated" | "unchanged"

/** One definition of a file, as it will be applied. */
export interface Planned<Body> {
  readonly name: string
  readonly action: ApplyAction
  /** What `PUT` takes. */
  readonly body: Body
}

/** What the server answers of a definition that matters here. */
interface StoredDefinition {
  readonly builtIn: boolean
  readonly mcpServers?: ReadonlyArray<McpServerView> | undefined
}

/** Key order does not make two definitions differ. */
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]))
    : value

const sameDefinition = (a: unknown, b: unknown): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))

/**
 * What applying `entries` over the server's `existing` definitions does, one by one, in the
 * file's order; fails when an entry names a built-in definition (the server refuses to replace
 * it). `definitionOf` is the domain's: what the server would store of a body.
 */
export const planApply = <Body extends { readonly mcpServers?: ReadonlyArray<McpServerBody> | undefined }, Stored extends StoredDefinition>(
  options: {
    /** What a built-in one is called in the refusal: `agent`, `sub-agent kind`. */
    readonly noun: string
    readonly entries: ReadonlyArray<{ readonly name: string; readonly body: Body }>
    readonly existing: ReadonlyMap<string, Stored>
    readonly definitionOf: (
      name: string,
      body: Body,
      keptHeaders: (server: McpServerBody) => ReadonlyArray<string> | undefined
    ) => Stored
  }
): Effect.Effect<ReadonlyArray<Planned<Body>>, CliFailure> =>
  Effect.gen(function*() {
    const planned: Array<Planned<Body>> = []
    for (const { body, name } of options.entries) {
      const current = options.existing.get(name)
      if (current?.builtIn === true) {
        return yield* Effect.fail(
          new CliFailure({ message: `${options.noun} "${name}" is built in: it cannot be replaced (choose another name)` })
        )
      }
      const action: ApplyAction = current === undefined
        ? "created"
        : !givesHeaderValues(body.mcpServers) && sameDefinition(current, options.definitionOf(name, body, keptHeaderNames(current)))
        ? "unchanged"
        : "updated"
      planned.push({ name, action, body })
    }
    return planned
  })

/**
 * Writes the planned definitions that are new or differ (`put`), in order, printing
 * `<action> <name>` as each is done — or, with `json`, `{ [key]: [{ [nameKey], action }] }` at the
 * end. A failed write stops there: the lines before it say what was applied.
 */
export const writePlanned = <Body, E>(
  planned: ReadonlyArray<Planned<Body>>,
  put: (entry: Planned<Body>) => Effect.Effect<unknown, E>,
  output: { readonly json: boolean; readonly key: string; readonly nameKey: string }
): Effect.Effect<void, E> =>
  Effect.gen(function*() {
    for (const entry of planned) {
      if (entry.action !== "unchanged") yield* put(entry)
      if (!output.json) yield* Console.log(`${entry.action.padEnd(9)} ${entry.name}`)
    }
    if (output.json) {
      yield* printJson({ [output.key]: planned.map(({ action, name }) => ({ [output.nameKey]: name, action })) })
    }
  })

/** `-` for an empty list, else its items comma-separated. */
export const listOrDash = (items: ReadonlyArray<string>) => items.length === 0 ? "-" : items.join(",")
