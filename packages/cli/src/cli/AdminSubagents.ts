/**
 * `switchboard admin subagents apply|list|delete`: sub-agent kinds as
 * configuration (docs/subagents.md) — a directory of kinds applied to the
 * server (one file per kind, `SubagentsDir.ts`), the kinds listed (the
 * built-in ones first), a kind deleted. Built as the agents' commands are
 * (`AdminAgents.ts`), on the same helpers (`DefinitionFiles.ts`).
 */
import { isKindName, subagentDefinitionOf } from "@switchboard/domain"
import type { SubagentDefinition } from "@switchboard/domain"
import { Console, Effect } from "effect"
import { Argument, Command } from "effect/cli"
import { fail, jsonFlag, orDash, printJson, withAdmin } from "./AdminClient.ts"
import { listOrDash, planApply, writePlanned } from "./DefinitionFiles.ts"
import { loadSubagentsDir } from "./SubagentsDir.ts"

/** One line per kind: the job tool's input (an optional parameter marked `?`), tools, MCP servers, limits, description. */
export const subagentLine = (kind: SubagentDefinition) =>
  `${kind.kind}${kind.builtIn ? " (built in)" : ""}  ` +
  `input ${listOrDash(kind.input.map((p) => p.required ? p.key : `${p.key}?`))}  tools ${listOrDash(kind.tools)}  ` +
  `mcp ${listOrDash((kind.mcpServers ?? []).map((server) => server.name))}  steps ${kind.maxSteps}  ` +
  `model ${orDash(kind.model)}  timeout ${kind.timeoutMs === undefined ? "-" : `${kind.timeoutMs} ms`}  ` +
  kind.description.replace(/\s+/g, " ").trim()

const subagentsApply = Command.make("apply", {
  dir: Argument.String("dir").pipe(
    Argument.withDescription("A directory with one JSON or YAML file per kind, named for the kind (summarize.yaml)")
  ),
  json: jsonFlag
}, ({ dir, json }) =>
  Effect.gen(function*() {
    // Every file is checked before the server is asked anything.
    const entries = yield* loadSubagentsDir(dir).pipe(Effect.catchTag("CliFailure", (e) => fail(e.message)))
    return yield* withAdmin((client) =>
      Effect.gen(function*() {
        const { subagents } = yield* client.subagentsAdmin.list()
        const planned = yield* planApply({
          noun: "sub-agent kind",
          entries,
          existing: new Map(subagents.map((kind) => [kind.kind, kind])),
          definitionOf: subagentDefinitionOf
        }).pipe(Effect.catchTag("CliFailure", (e) => fail(e.message)))
        yield* writePlanned(planned, (kind) => client.subagentsAdmin.put({ params: { kind: kind.name }, payload: kind.body }), {
          json,
          key: "subagents",
          nameKey: "kind"
        })
      })
    )
  })).pipe(
    Command.withDescription(
      "Define the sub-agent kinds of a directory: one .json, .yaml or .yml file per kind, named for it, each " +
        "{ description, input, systemPrompt, tools?, mcpServers?, result, model?, maxSteps?, timeoutMs? }, all checked " +
        "against the API's schema first (an error names the file and the path in it). Idempotent: each kind is " +
        "reported created, updated or unchanged, and only the first two are written (PUT /admin/subagents/{kind}). " +
        "Kinds absent from the directory are left as they are."
    )
  )

const subagentsList = Command.make("list", { json: jsonFlag }, ({ json }) =>
  withAdmin((client) =>
    Effect.gen(function*() {
      const { subagents } = yield* client.subagentsAdmin.list()
      if (json) return yield* printJson({ subagents })
      for (const kind of subagents) yield* Console.log(subagentLine(kind))
    })
  )).pipe(
    Command.withDescription(
      "Every sub-agent kind, the built-in ones first: kind, input parameters (optional ones marked ?), tools, MCP " +
        "servers, max steps, model, time limit, description (--json adds the prompts and result schemas)."
    )
  )

const subagentsDelete = Command.make("delete", {
  kind: Argument.String("kind").pipe(Argument.withDescription("The sub-agent kind to delete"))
}, ({ kind }) =>
  Effect.gen(function*() {
    if (!isKindName(kind)) return yield* fail(`"${kind}" is no sub-agent kind name: 1 to 32 of a-z, 0-9 and -`)
    return yield* withAdmin((client) =>
      Effect.gen(function*() {
        yield* client.subagentsAdmin.remove({ params: { kind } })
        yield* Console.log(`deleted: ${kind}`)
      })
    )
  })).pipe(
    Command.withDescription(
      "Delete a sub-agent kind (jobs already dispatched finish as they were). Refused for a built-in kind " +
        "(subagent_builtin) and for a kind an agent still names in its jobKinds (subagent_in_use, naming the agents)."
    )
  )

export const subagentsGroup = Command.make("subagents").pipe(
  Command.withDescription("Sub-agent kinds as configuration: apply a directory of kinds, list them, delete one."),
  Command.withSubcommands([subagentsApply, subagentsList, subagentsDelete])
)
