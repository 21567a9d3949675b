/**
 * Conversion between the provider-agnostic chat model (`@switchboard/domain`)
 * and the Anthropic Messages API wire format (`POST /v1/messages`, version
 * `2023-06-01`). Pure functions, no I/O: `Anthropic.ts` moves the bytes.
 *
 * What the Messages API demands, and how the conversation is bent to fit:
 * - the system prompt is a top-level `system` field, not a message: the
 *   adapter's `systemPrompt` and the text of any `system`-role message go there;
 * - roles are `user` and `assistant` only, and two messages of the same role in
 *   a row are merged into one (the API rejects, or in some versions silently
 *   joins, consecutive same-role turns);
 * - a tool result is a `tool_result` block inside a *user* message, and all the
 *   results answering one assistant turn must sit in the one user message right
 *   after it, before any text: consecutive `tool` messages (and a user message
 *   next to them) become one user message, results first;
 * - empty or whitespace-only text blocks are rejected, so they are never sent.
 *
 * As with `OpenAiWire`, providers see a message's text (`providerText`) plus
 * its tool calls / tool result, never `parts` or `metadata`; a tool result is
 * the same JSON text the OpenAI wire sends (`toolResultContent`).
 */
import { Result } from "effect"
import type {
  ChatMessage,
  ProviderChatParams,
  ProviderChatResponse,
  ProviderImage,
  ProviderUsage,
  ToolCall,
  ToolSchema
} from "@switchboard/domain"
import { isRecord, isTokenCount, jsonKind, providerText, toolInputSchema, toolResultContent } from "../WireParts.ts"
import { ProviderError } from "../ProviderAdapter.ts"

// ---------------------------------------------------------------------------
// Wire types (the subset of the Messages API this adapter sends)

export interface AnthropicTool {
  readonly name: string
  readonly description?: string
  /** A JSON Schema object: `{ type: "object", properties, required, … }`. */
  readonly input_schema: Record<string, unknown>
}

export interface AnthropicTextBlock {
  readonly type: "text"
  readonly text: string
}

export interface AnthropicToolUseBlock {
  readonly type: "tool_use"
  readonly id: string
  readonly name: string
  readonly input: Record<string, unknown>
}

export interface AnthropicToolResultBlock {
  readonly type: "tool_result"
  readonly tool_use_id: string
  readonly content: string
  /** Present (and true) only for a failed tool. */
  readonly is_error?: true
}

export interface AnthropicImageBlock {
  readonly type: "image"
  readonly source: { readonly type: "base64"; readonly media_type: ProviderImage["mediaType"]; readonly data: string }
}

export type AnthropicContentBlock = AnthropicTextBlock | AnthropicToolUseBlock | AnthropicToolResultBlock | AnthropicImageBlock

export interface AnthropicMessage {
  readonly role: "user" | "assistant"
  /** A plain string when the message is one text block; blocks otherwise. */
  readonly content: string | ReadonlyArray<AnthropicContentBlock>
}

/** The body of `POST /v1/messages`. */
export interface AnthropicMessagesRequest {
  readonly model: string
  readonly max_tokens: number
  readonly system?: string
  readonly messages: ReadonlyArray<AnthropicMessage>
  readonly tools?: ReadonlyArray<AnthropicTool>
  /** Set only when exactly one tool call is asked for (`toolChoice: "required"`). */
  readonly tool_choice?: { readonly type: "any"; readonly disable_parallel_tool_use: true }
  /** The answer as server-sent events (`MessageEvents`). */
  readonly stream?: true
}

export interface AnthropicRequestOptions {
  readonly model: string
  readonly maxTokens: number
}

// ---------------------------------------------------------------------------
// Tools

/** The same JSON Schema as the OpenAI wire's `parameters` (`toolInputSchema`), as `input_schema`. */
export const toAnthropicTool = (schema: ToolSchema): AnthropicTool => ({
  name: schema.name,
  ...(schema.description !== "" ? { description: schema.description } : {}),
  input_schema: toolInputSchema(schema)
})

export const toAnthropicTools = (schemas: ReadonlyArray<ToolSchema>): Array<AnthropicTool> => schemas.map(toAnthropicTool)

// ---------------------------------------------------------------------------
// Request side

/** The API rejects text blocks that are empty or only whitespace. */
const hasText = (text: string): boolean => text.trim() !== ""

/** The top-level `system`: the system prompt, then the text of each `system`-role message, blank ones left out. */
export const toAnthropicSystem = (params: ProviderChatParams): string =>
  [params.systemPrompt, ...params.messages.filter((m) => m.role === "system").map(providerText)]
    .filter(hasText)
    .join("\n\n")

interface Turn {
  readonly role: "user" | "assistant"
  readonly blocks: Array<AnthropicContentBlock>
}

/** One domain message as a turn's blocks; `undefined` for `system` messages (they go to `system`). */
const toTurn = (message: ChatMessage): Turn | undefined => {
  switch (message.role) {
    case "system":
      return undefined
    case "user": {
      const text = providerText(message)
      return { role: "user", blocks: hasText(text) ? [{ type: "text", text }] : [] }
    }
    case "assistant": {
      const text = providerText(message)
      return {
        role: "assistant",
        blocks: [
          ...(hasText(text) ? [{ type: "text", text } as const] : []),
          ...(message.toolCalls ?? []).map((call): AnthropicToolUseBlock => ({
            type: "tool_use",
            id: call.id,
            name: call.name,
            input: call.args
          }))
        ]
      }
    }
    case "tool": {
      // As on the OpenAI wire: a tool message without its result could not name the call it answers.
      const result = message.toolResult
      if (result === undefined) return { role: "user", blocks: [] }
      return {
        role: "user",
        blocks: [{
          type: "tool_result",
          tool_use_id: result.toolCallId,
          content: toolResultContent(result),
          // Same test as toolResultContent's: a non-empty error is a failed tool.
          ...(result.error ? { is_error: true as const } : {})
        }]
      }
    }
  }
}

/** Tool results before anything else in a user message, each group in its original order. */
const resultsFirst = (blocks: ReadonlyArray<AnthropicContentBlock>): Array<AnthropicContentBlock> => [
  ...blocks.filter((b) => b.type === "tool_result"),
  ...blocks.filter((b) => b.type !== "tool_result")
]

const toWireMessage = ({ role, blocks }: Turn): AnthropicMessage => {
  const ordered = role === "user" ? resultsFirst(blocks) : blocks
  const [only] = ordered
  return ordered.length === 1 && only?.type === "text" ? { role, content: only.text } : { role, content: ordered }
}

const toImageBlock = (image: ProviderImage): AnthropicImageBlock => ({
  type: "image",
  source: { type: "base64", media_type: image.mediaType, data: image.data }
})

/**
 * The `messages` of a request: every non-system message as a turn, turns
 * without content dropped, consecutive turns of one role merged; the request's
 * images go after the blocks of the last user message.
 */
export const toAnthropicMessages = (params: ProviderChatParams): Array<AnthropicMessage> => {
  const turns: Array<Turn> = []
  const images = params.images ?? []
  const lastUser = params.messages.findLastIndex((m) => m.role === "user")
  for (const [index, message] of params.messages.entries()) {
    const turn = toTurn(message)
    if (turn === undefined) continue
    if (index === lastUser) turn.blocks.push(...images.map(toImageBlock))
    if (turn.blocks.length === 0) continue
    const last = turns.at(-1)
    if (last !== undefined && last.role === turn.role) last.blocks.push(...turn.blocks)
    else turns.push({ role: turn.role, blocks: [...turn.blocks] })
  }
  return turns.map(toWireMessage)
}

/** The body of `POST /messages`; `system` and `tools` are omitted when empty. */
export const buildMessagesRequest = (params: ProviderChatParams, options: AnthropicRequestOptions): AnthropicMessagesRequest => {
  const system = toAnthropicSystem(params)
  const tools = params.toolSchemas.length > 0 ? toAnthropicTools(params.toolSchemas) : undefined
  return {
    model: params.model ?? options.model,
    max_tokens: options.maxTokens,
    ...(system !== "" ? { system } : {}),
    messages: toAnthropicMessages(params),
    ...(tools ? { tools } : {}),
    ...(tools && params.toolChoice === "required"
      ? { tool_choice: { type: "any", disable_parallel_tool_use: true } as const }
      : {})
  }
}

/** The same request with its answer streamed (`MessageEvents`). */
export const buildMessagesStreamRequest = (params: ProviderChatParams, options: AnthropicRequestOptions): AnthropicMessagesRequest => ({
  ...buildMessagesRequest(params, options),
  stream: true
})

// ---------------------------------------------------------------------------
// Response side

/**
 * A Messages `usage` as the port counts it. Anthropic's `input_tokens` leaves
 * out the prompt read from or written to the cache; the port's `inputTokens`
 * is the whole prompt, as on Chat Completions, with the part read from the
 * cache (`cache_read_input_tokens`) as `cachedInputTokens`. `undefined` when
 * there is none that reads: usage informs, it never fails a call.
 */
export const parseUsage = (raw: unknown): ProviderUsage | undefined => {
  if (!isRecord(raw)) return undefined
  const input = raw["input_tokens"]
  const output = raw["output_tokens"]
  if (!isTokenCount(input) || !isTokenCount(output)) return undefined
  const read = raw["cache_read_input_tokens"]
  const written = raw["cache_creation_input_tokens"]
  return {
    inputTokens: input + (isTokenCount(read) ? read : 0) + (isTokenCount(written) ? written : 0),
    outputTokens: output,
    ...(isTokenCount(read) ? { cachedInputTokens: read } : {})
  }
}

const invalid = (message: string) =>
  Result.fail(new ProviderError({ reason: "InvalidResponse", message: `Invalid Anthropic message: ${message}` }))

/**
 * A Messages API answer (parsed JSON, not trusted) → the provider-agnostic
 * response: the `text` blocks joined as `content` (they are consecutive pieces
 * of one answer, e.g. split around citations), each `tool_use` block a tool
 * call. Other block types (thinking, server tools) are not ours and are
 * skipped. A body without a `content` array is an `InvalidResponse`; a tool
 * call whose `input` is not an object is not: like a malformed call on the
 * OpenAI wire, it gets `args: {}` and `invalidArgs` for the orchestrator to
 * report back to the model.
 */
export const parseMessage = (body: unknown): Result.Result<ProviderChatResponse, ProviderError> => {
  if (!isRecord(body)) return invalid(`expected a JSON object, got ${jsonKind(body)}`)
  const content = body["content"]
  if (!Array.isArray(content)) {
    return invalid(content === undefined ? "no content" : `content is ${jsonKind(content)}`)
  }
  const texts: Array<string> = []
  const toolCalls: Array<ToolCall> = []
  for (const [index, block] of content.entries()) {
    if (!isRecord(block)) return invalid(`content[${index}] is ${jsonKind(block)}`)
    switch (block["type"]) {
      case "text": {
        const text = block["text"]
        if (typeof text !== "string") {
          return invalid(text === undefined ? `content[${index}] is a text block without text` : `content[${index}].text is ${jsonKind(text)}`)
        }
        texts.push(text)
        break
      }
      case "tool_use": {
        const name = block["name"]
        if (typeof name !== "string" || name === "") return invalid(`content[${index}] is a tool_use without a name`)
        const id = block["id"]
        const input = block["input"]
        toolCalls.push({
          // The API always sends one; a proxy that drops it still needs the call to be answerable.
          id: typeof id === "string" && id !== "" ? id : `call_${index}`,
          name,
          ...(isRecord(input)
            ? { args: input }
            : {
              args: {},
              invalidArgs: input === undefined ? "arguments are missing" : `arguments must be a JSON object, got ${jsonKind(input)}`
            })
        })
        break
      }
      default:
        break
    }
  }
  const usage = parseUsage(body["usage"])
  return Result.succeed({
    content: texts.join(""),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    ...(usage !== undefined ? { usage } : {})
  })
}
