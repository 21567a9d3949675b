/**
 * Conversion between the provider-agnostic chat model (`@switchboard/domain`)
 * and the OpenAI Chat Completions wire format. Pure functions, no I/O: the
 * transports (`UndiciTransport`, `SdkTransport`) move the bytes, this module
 * decides what they are, so both transports send and read exactly the same
 * thing.
 *
 * Providers see a message's `content` (plus `toolCalls` / `toolResult`), never
 * `parts` or `metadata`: data parts are UI payloads.
 */
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam
} from "openai/resources/chat/completions"
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
import { ProviderError } from "../ProviderAdapter.ts"
import { isRecord, isTokenCount, jsonKind, parseToolArguments, providerText, toolInputSchema, toolResultContent } from "../WireParts.ts"

export const toWireTool = (schema: ToolSchema): ChatCompletionFunctionTool => ({
  type: "function",
  function: {
    name: schema.name,
    ...(schema.description !== "" ? { description: schema.description } : {}),
    parameters: toolInputSchema(schema)
  }
})

export const toWireTools = (schemas: ReadonlyArray<ToolSchema>): Array<ChatCompletionFunctionTool> =>
  schemas.map(toWireTool)

const toWireMessage = (message: ChatMessage): ChatCompletionMessageParam | undefined => {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: providerText(message) }
    case "assistant": {
      const text = providerText(message)
      if (message.toolCalls === undefined || message.toolCalls.length === 0) return { role: "assistant", content: text }
      const assistant: ChatCompletionAssistantMessageParam = {
        role: "assistant",
        // OpenAI wants null, not "", beside tool calls.
        content: text === "" ? null : text,
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: JSON.stringify(call.args) }
        }))
      }
      return assistant
    }
    case "tool":
      // The domain schema guarantees a tool message carries its result; a stray one
      // without it could not name the call it answers, and the provider would reject it.
      return message.toolResult === undefined
        ? undefined
        : { role: "tool", tool_call_id: message.toolResult.toolCallId, content: toolResultContent(message.toolResult) }
  }
}

/** A `data:` URL, the form in which Chat Completions takes an inline image. */
export const imageDataUrl = (image: ProviderImage): string => `data:${image.mediaType};base64,${image.data}`

/** The last user message with the images after its text (`image_url` parts); the rest unchanged. */
const withImages = (
  messages: Array<ChatCompletionMessageParam>,
  images: ReadonlyArray<ProviderImage>
): Array<ChatCompletionMessageParam> => {
  if (images.length === 0) return messages
  const index = messages.findLastIndex((m) => m.role === "user")
  const target = messages[index]
  if (target === undefined || target.role !== "user") return messages
  const text = typeof target.content === "string" ? target.content : ""
  const content: Array<ChatCompletionContentPart> = [
    ...(text === "" ? [] : [{ type: "text" as const, text }]),
    ...images.map((image) => ({ type: "image_url" as const, image_url: { url: imageDataUrl(image) } }))
  ]
  return messages.map((m, i) => i === index ? { role: "user", content } : m)
}

/** The messages of a request: the system prompt first (when there is one), then the conversation. */
export const toWireMessages = (params: ProviderChatParams): Array<ChatCompletionMessageParam> => {
  const conversation = withImages(
    params.messages.flatMap((m) => {
      const wire = toWireMessage(m)
      return wire === undefined ? [] : [wire]
    }),
    params.images ?? []
  )
  return params.systemPrompt === ""
    ? conversation
    : [{ role: "system", content: params.systemPrompt }, ...conversation]
}

/**
 * The body of `POST /chat/completions`; `tools` is omitted when no tool is
 * offered. `model` is the adapter's, unless the call names its own.
 */
export const buildChatRequest = (params: ProviderChatParams, model: string): ChatCompletionCreateParamsNonStreaming => {
  const tools = params.toolSchemas.length > 0 ? toWireTools(params.toolSchemas) : undefined
  return {
    model: params.model ?? model,
    messages: toWireMessages(params),
    ...(tools ? { tools } : {}),
    ...(tools && params.toolChoice === "required" ? { tool_choice: "required", parallel_tool_calls: false } : {})
  }
}

/**
 * The same request with its answer streamed (`StreamedAnswer`): chunks of
 * deltas, the usage in a last chunk of its own.
 */
export const buildChatStreamRequest = (params: ProviderChatParams, model: string): ChatCompletionCreateParamsStreaming => ({
  ...buildChatRequest(params, model),
  stream: true,
  stream_options: { include_usage: true }
})

// ---------------------------------------------------------------------------
// Response side

/**
 * A Chat Completions `usage` (`prompt_tokens`, `completion_tokens`, and the
 * cached part of the prompt in `prompt_tokens_details.cached_tokens`), or
 * `undefined` when there is none that reads: usage informs, it never fails a call.
 */
export const parseUsage = (raw: unknown): ProviderUsage | undefined => {
  if (!isRecord(raw)) return undefined
  const input = raw["prompt_tokens"]
  const output = raw["completion_tokens"]
  if (!isTokenCount(input) || !isTokenCount(output)) return undefined
  const details = raw["prompt_tokens_details"]
  const cached = isRecord(details) ? details["cached_tokens"] : undefined
  return { inputTokens: input, outputTokens: output, ...(isTokenCount(cached) ? { cachedInputTokens: cached } : {}) }
}

const invalid = (message: string) =>
  Result.fail(new ProviderError({ reason: "InvalidResponse", message: `Invalid chat completion: ${message}` }))

/**
 * A Chat Completions answer (parsed JSON, not trusted) → the provider-agnostic
 * response. Only `choices[0]` is read (we never ask for `n > 1`). A body that is
 * not a completion is an `InvalidResponse`; a bad tool call is not (see above).
 */
export const parseChatCompletion = (body: unknown): Result.Result<ProviderChatResponse, ProviderError> => {
  if (!isRecord(body)) return invalid(`expected a JSON object, got ${jsonKind(body)}`)
  const choices = body["choices"]
  if (!Array.isArray(choices) || choices.length === 0) return invalid("no choices")
  const choice: unknown = choices[0]
  const message = isRecord(choice) ? choice["message"] : undefined
  if (!isRecord(message)) return invalid("choices[0] has no message")

  const content = message["content"]
  if (content !== undefined && content !== null && typeof content !== "string") {
    return invalid(`message.content is ${jsonKind(content)}`)
  }

  const rawCalls = message["tool_calls"]
  if (rawCalls !== undefined && rawCalls !== null && !Array.isArray(rawCalls)) {
    return invalid(`message.tool_calls is ${jsonKind(rawCalls)}`)
  }
  const toolCalls: Array<ToolCall> = []
  for (const [index, raw] of (rawCalls ?? []).entries()) {
    if (!isRecord(raw)) return invalid(`tool_calls[${index}] is ${jsonKind(raw)}`)
    // Custom (free-text) tools are never offered, so their calls are not ours to run.
    if (raw["type"] !== undefined && raw["type"] !== "function") continue
    const fn = raw["function"]
    const name = isRecord(fn) ? fn["name"] : undefined
    if (typeof name !== "string" || name === "") return invalid(`tool_calls[${index}] has no function name`)
    const id = raw["id"]
    const { args, invalidArgs } = parseToolArguments(isRecord(fn) ? fn["arguments"] : undefined)
    toolCalls.push({
      // A server that omits ids still needs the call to be answerable: derive a stable one.
      id: typeof id === "string" && id !== "" ? id : `call_${index}`,
      name,
      args,
      ...(invalidArgs !== undefined ? { invalidArgs } : {})
    })
  }

  const usage = parseUsage(body["usage"])
  return Result.succeed({
    content: typeof content === "string" ? content : "",
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    ...(usage !== undefined ? { usage } : {})
  })
}

/** An `/audio/transcriptions` answer (`{ text }`, the default `json` response format) → the text. */
export const parseTranscription = (body: unknown): Result.Result<string, ProviderError> => {
  if (isRecord(body) && typeof body["text"] === "string") return Result.succeed(body["text"])
  return Result.fail(new ProviderError({
    reason: "InvalidResponse",
    message: `Invalid transcription: expected { text }, got ${jsonKind(body)}`
  }))
}
