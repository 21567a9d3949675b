/**
 * An MCP tool's answer as the tool message a turn stores and the model reads
 * (docs/tools.md): its `content` as text (text parts joined, other parts
 * named), its `structuredContent` as the result's JSON, `isError` as the
 * result's `error`. Bounded: a result over `MAX_MCP_RESULT_BYTES` is a tool
 * error that says so, never a stored megabyte.
 */
import type { ChatMessage, ToolCall } from "@switchboard/domain"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"

/** The largest result stored (its JSON); the model is told when one is larger. */
export const MAX_MCP_RESULT_BYTES = 256 * 1024

type ContentPart = CallToolResult["content"][number]

const textOf = (part: ContentPart): string => {
  switch (part.type) {
    case "text":
      return part.text
    case "image":
    case "audio":
      return `[${part.type}: ${part.mimeType}]`
    case "resource":
      return "text" in part.resource && typeof part.resource.text === "string" ? part.resource.text : `[resource: ${part.resource.uri}]`
    case "resource_link":
      return `[resource: ${part.uri}]`
    default:
      return ""
  }
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? "", "utf8")

/** The tool message answering `call` with an error the model reads. */
export const toolError = (call: ToolCall, error: string, id: string, now: number): ChatMessage => ({
  id,
  role: "tool",
  content: error,
  toolResult: { toolCallId: call.id, name: call.name, error },
  timestamp: now
})

/** The tool message answering `call` with the server's answer (or an error, when it is too large to keep). */
export const toolMessage = (call: ToolCall, answer: CallToolResult, id: string, now: number): ChatMessage => {
  const text = (answer.content ?? []).map(textOf).filter((t) => t !== "").join("\n")
  const result: unknown = answer.structuredContent === undefined ? text : answer.structuredContent
  const size = bytes(result) + bytes(text)
  if (size > MAX_MCP_RESULT_BYTES) {
    return toolError(call, `the result of ${call.name} is ${size} bytes, over the ${MAX_MCP_RESULT_BYTES} a tool result may be`, id, now)
  }
  if (answer.isError === true) return toolError(call, text === "" ? `${call.name} failed` : text, id, now)
  const content = text === "" ? JSON.stringify(result) : text
  return { id, role: "tool", content, toolResult: { toolCallId: call.id, name: call.name, result }, timestamp: now }
}
