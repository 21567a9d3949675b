/**
 * `ToolRegistry` (docs/chat.md): the tools
 * the client can execute, keyed by name, and their schemas in the
 * provider-agnostic internal format (`ToolSchema`: name, description,
 * parameter list). Provider adapters convert that format to their wire
 * format; `execute` never leaves the client.
 */
import { DefinitionRegistry } from "@switchboard/domain"
import type { ToolDefinition, ToolSchema } from "@switchboard/domain"

export class ToolRegistry extends DefinitionRegistry<string, ToolDefinition> {
  protected keyOf(definition: ToolDefinition): string {
    return definition.name
  }

  /** Every registered tool's schema, in registration order, without `execute`. */
  toToolSchemas(): ReadonlyArray<ToolSchema> {
    return this.getAll().map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters.map((parameter) => ({ ...parameter }))
    }))
  }
}
