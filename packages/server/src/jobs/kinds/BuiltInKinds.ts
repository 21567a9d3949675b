/**
 * The built-in kinds as definitions, read-only (`GET /admin/subagents` lists
 * them first): their job tools' descriptions and parameters, their built-in
 * tools, their results' JSON Schemas — derived from the domain's specs, so
 * the listing cannot drift from what runs. Their prompts are code
 * (`subagents/<kind>/`); the listing says where.
 */
import type { JobKind, SubagentDefinition, SubagentToolName } from "@switchboard/domain"
import { DEFAULT_SUBAGENT_MAX_STEPS, jobKindSpecs } from "@switchboard/domain"
import { Schema } from "effect"

const toolsOf: { readonly [K in JobKind]: ReadonlyArray<SubagentToolName> } = {
  research: ["web_search", "fetch_url"],
  demo: ["write_demo"],
  visual: ["write_svg"]
}

const resultSchema = (kind: JobKind) => Schema.toJsonSchemaDocument(jobKindSpecs[kind].result).schema as Record<string, unknown>

export const builtInKindDefinitions: ReadonlyArray<SubagentDefinition> = Object.values(jobKindSpecs).map((spec) => ({
  kind: spec.kind,
  description: spec.tool.description,
  input: spec.tool.parameters,
  systemPrompt: `Built in: the ${spec.kind} sub-agent's prompt is part of the server (docs/jobs.md).`,
  result: resultSchema(spec.kind),
  tools: toolsOf[spec.kind],
  maxSteps: DEFAULT_SUBAGENT_MAX_STEPS,
  builtIn: true
}))
