/**
 * A streamed Anthropic message (`stream: true`) read into the port's events.
 * The Messages API sends named events: `message_start` (the usage of the
 * prompt), then per content block `content_block_start` (a `text` block, or a
 * `tool_use` with its id and name), `content_block_delta`s (`text_delta`,
 * `input_json_delta` pieces of the arguments' JSON) and `content_block_stop`;
 * then `message_delta` (stop reason, output tokens so far) and `message_stop`,
 * the end. `ping`s come at any time; an `error` event ends a stream that had
 * started with a 200 (e.g. `overloaded_error`).
 *
 * The `finish` is what `chat` (`parseMessage`) would have answered for the
 * blocks the events add up to: the text blocks joined, each `tool_use` a call
 * (`call_<block index>` when a proxy drops its id), its arguments the pieces
 * of JSON joined and read like an object `input` (`parseToolArguments`:
 * none is `{}`, a non-object is `args: {}` + `invalidArgs`, in `chat`'s
 * words). Other block types (thinking, server tools) are skipped, as in `chat`.
 */
import { Result } from "effect"
import type { ToolCall } from "@switchboard/domain"
import type { ProviderDelta } from "../ProviderAdapter.ts"
import { incompleteError, invalidEventError, parseEventData, streamedError } from "../StreamedAnswer.ts"
import type { AnswerReader } from "../StreamedAnswer.ts"
import { isRecord, jsonKind, parseToolArguments } from "../WireParts.ts"
import { parseUsage } from "./AnthropicWire.ts"

/** The HTTP status of each `error.type`, as the API answers it before a stream: a streamed error gets the same public reason. */
const statusOfErrorType: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529
}

type Block =
  | { readonly kind: "text" }
  | { readonly kind: "tool"; readonly id: string; readonly name: string; readonly json: Array<string> }
  | { readonly kind: "other" }

/** A fresh reader for one streamed message; `secrets` are kept out of its error messages. */
export const messageEventsReader = (secrets: ReadonlyArray<string>): AnswerReader => {
  const texts: Array<string> = []
  const blocks = new Map<number, Block>()
  const calls: Array<Extract<Block, { kind: "tool" }>> = []
  // The usage fields as last reported: `message_start` has the prompt's, `message_delta` the output so far.
  const usage: Record<string, unknown> = {}
  let stopped = false
  let done = false

  const none = Result.succeed<ReadonlyArray<ProviderDelta>>([])
  const invalid = (detail: string) => Result.fail(invalidEventError(detail, secrets))
  const addUsage = (raw: unknown) => {
    if (isRecord(raw)) Object.assign(usage, raw)
  }
  const text = (delta: string): Array<ProviderDelta> => {
    if (delta === "") return []
    texts.push(delta)
    return [{ type: "text-delta", delta }]
  }

  const startBlock = (index: number, block: Record<string, unknown>) => {
    switch (block["type"]) {
      case "text":
        blocks.set(index, { kind: "text" })
        return Result.succeed(text(typeof block["text"] === "string" ? block["text"] : ""))
      case "tool_use": {
        const name = block["name"]
        if (typeof name !== "string" || name === "") return invalid(`content block ${index} is a tool_use without a name`)
        const id = typeof block["id"] === "string" && block["id"] !== "" ? block["id"] : `call_${index}`
        const call = { kind: "tool" as const, id, name, json: [] as Array<string> }
        blocks.set(index, call)
        calls.push(call)
        const out: Array<ProviderDelta> = [{ type: "tool-call-start", id, name }]
        // The API starts with `input: {}` and streams the JSON; a proxy may send the whole input here instead.
        const input = block["input"]
        if (input !== undefined && !(isRecord(input) && Object.keys(input).length === 0)) {
          call.json.push(JSON.stringify(input))
          out.push({ type: "tool-call-delta", id, delta: JSON.stringify(input) })
        }
        return Result.succeed(out)
      }
      default:
        blocks.set(index, { kind: "other" })
        return none
    }
  }

  const blockDelta = (index: number, delta: Record<string, unknown>) => {
    const block = blocks.get(index)
    switch (delta["type"]) {
      case "text_delta":
        if (block?.kind !== "text") return invalid(`a text_delta for content block ${index}, which is not text`)
        return Result.succeed(typeof delta["text"] === "string" ? text(delta["text"]) : [])
      case "input_json_delta": {
        if (block?.kind !== "tool") return invalid(`an input_json_delta for content block ${index}, which is not a tool_use`)
        const piece = delta["partial_json"]
        if (typeof piece !== "string" || piece === "") return none
        block.json.push(piece)
        return Result.succeed([{ type: "tool-call-delta" as const, id: block.id, delta: piece }])
      }
      default:
        // thinking, signatures, citations: not ours
        return none
    }
  }

  return {
    read: (event) => {
      const parsed = parseEventData(event, secrets)
      if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
      const data = parsed.success
      if (!isRecord(data)) return invalid(`a ${event.event} event whose data is ${jsonKind(data)}`)
      const index = typeof data["index"] === "number" ? data["index"] : 0
      switch (data["type"] ?? event.event) {
        case "message_start":
          addUsage(isRecord(data["message"]) ? data["message"]["usage"] : undefined)
          return none
        case "content_block_start":
          return isRecord(data["content_block"]) ? startBlock(index, data["content_block"]) : invalid("content_block_start without its block")
        case "content_block_delta":
          return isRecord(data["delta"]) ? blockDelta(index, data["delta"]) : invalid("content_block_delta without its delta")
        case "message_delta":
          addUsage(data["usage"])
          if (isRecord(data["delta"]) && typeof data["delta"]["stop_reason"] === "string") stopped = true
          return none
        case "message_stop":
          done = true
          return none
        case "error": {
          const error = isRecord(data["error"]) ? data["error"] : {}
          const type = typeof error["type"] === "string" ? error["type"] : "error"
          const message = typeof error["message"] === "string" ? error["message"] : JSON.stringify(data)
          return Result.fail(streamedError(`${type}: ${message}`, statusOfErrorType[type], secrets))
        }
        default:
          // ping, content_block_stop, and event types added after this adapter
          return none
      }
    },
    complete: () => done,
    end: () => {
      if (!done && !stopped) return Result.fail(incompleteError("end of the message (message_stop)"))
      const toolCalls = calls.map((call): ToolCall => ({ id: call.id, name: call.name, ...parseToolArguments(call.json.join("")) }))
      const reported = parseUsage(usage)
      return Result.succeed({
        content: texts.join(""),
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
        ...(reported !== undefined ? { usage: reported } : {})
      })
    }
  }
}
