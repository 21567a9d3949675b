/**
 * A streamed Chat Completion (`stream: true`) read into the port's events.
 * Each `data:` event is a `chat.completion.chunk`: `choices[0].delta.content`
 * is a piece of text, `delta.tool_calls[i]` a piece of the call at `index`
 * (its first piece brings the id and the function's name, the later ones
 * pieces of `arguments`), `finish_reason` ends the choice, a last chunk with
 * no choices carries the `usage` (asked for with `stream_options`), and
 * `data: [DONE]` ends the stream.
 *
 * The `finish` is what `chat` would have answered because it is made by
 * `chat`'s own parser (`parseChatCompletion`), from the message the chunks add
 * up to: same ids (derived the same way when a server sends none), same
 * arguments, same `invalidArgs`. A body that ends after a `finish_reason` but
 * without `[DONE]` (servers that never send it) is complete; one that ends
 * before either is not.
 */
import { Result } from "effect"
import type { ProviderDelta } from "../ProviderAdapter.ts"
import { incompleteError, invalidEventError, parseEventData, streamedError } from "../StreamedAnswer.ts"
import type { AnswerReader } from "../StreamedAnswer.ts"
import { parseChatCompletion } from "./OpenAiWire.ts"
import { isRecord, jsonKind } from "../WireParts.ts"

interface CallSoFar {
  /** Its position among the calls, in order of first appearance: `chat`'s `call_<position>` when it has no id. */
  readonly position: number
  type: unknown
  id: string | undefined
  name: string | undefined
  readonly args: Array<string>
  started: boolean
}

/** An HTTP status in an error's `code` or `status` (proxies such as LiteLLM put one there); OpenAI's own codes are words. */
const statusIn = (error: Record<string, unknown>): number | undefined => {
  for (const raw of [error["status"], error["code"]]) {
    const n = typeof raw === "number" ? raw : typeof raw === "string" && /^\d{3}$/.test(raw) ? Number(raw) : NaN
    if (n >= 400 && n <= 599) return n
  }
  return undefined
}

const errorDetail = (error: unknown): string =>
  isRecord(error) && typeof error["message"] === "string" ? error["message"] : JSON.stringify(error)

/** A fresh reader for one streamed completion; `secrets` are kept out of its error messages. */
export const completionChunksReader = (secrets: ReadonlyArray<string>): AnswerReader => {
  const texts: Array<string> = []
  const calls: Array<CallSoFar> = []
  const byIndex = new Map<number, CallSoFar>()
  let finishReason: unknown
  let done = false
  let usage: unknown

  /** A call's start once its name is known (with the pieces of arguments that came before it), then its pieces. */
  const advance = (call: CallSoFar, piece: string, out: Array<ProviderDelta>) => {
    if (call.type !== undefined && call.type !== "function") return // custom tools are never offered: `chat` skips them too
    const id = call.id ?? `call_${call.position}`
    if (!call.started) {
      if (call.name === undefined) return
      call.started = true
      out.push({ type: "tool-call-start", id, name: call.name })
      const before = call.args.join("")
      if (before !== "") out.push({ type: "tool-call-delta", id, delta: before })
      return
    }
    if (piece !== "") out.push({ type: "tool-call-delta", id, delta: piece })
  }

  const readCall = (raw: unknown, i: number, out: Array<ProviderDelta>): string | undefined => {
    if (!isRecord(raw)) return `delta.tool_calls[${i}] is ${jsonKind(raw)}`
    const index = typeof raw["index"] === "number" ? raw["index"] : i
    let call = byIndex.get(index)
    if (call === undefined) {
      call = { position: calls.length, type: undefined, id: undefined, name: undefined, args: [], started: false }
      calls.push(call)
      byIndex.set(index, call)
    }
    const fn = isRecord(raw["function"]) ? raw["function"] : {}
    if (!call.started) {
      if (raw["type"] !== undefined) call.type = raw["type"]
      if (typeof raw["id"] === "string" && raw["id"] !== "") call.id = raw["id"]
      if (typeof fn["name"] === "string" && fn["name"] !== "") call.name = fn["name"]
    }
    // Some servers send the arguments as the object itself, like `chat`'s answers of theirs.
    const args = fn["arguments"]
    const piece = typeof args === "string" ? args : isRecord(args) ? JSON.stringify(args) : ""
    call.args.push(piece)
    advance(call, piece, out)
    return undefined
  }

  return {
    read: (event) => {
      if (event.data.trim() === "[DONE]") {
        done = true
        return Result.succeed([])
      }
      const parsed = parseEventData(event, secrets)
      if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
      const chunk = parsed.success
      if (!isRecord(chunk)) return Result.fail(invalidEventError(`a chunk that is ${jsonKind(chunk)}`, secrets))
      if (chunk["error"] !== undefined && chunk["error"] !== null) {
        const error = chunk["error"]
        return Result.fail(streamedError(errorDetail(error), isRecord(error) ? statusIn(error) : undefined, secrets))
      }
      if (chunk["usage"] !== undefined && chunk["usage"] !== null) usage = chunk["usage"]
      const choices = chunk["choices"] ?? []
      if (!Array.isArray(choices)) return Result.fail(invalidEventError(`choices is ${jsonKind(choices)}`, secrets))
      // Only the first choice is ours (we never ask for n > 1).
      const choice: unknown = choices.find((c) => isRecord(c) && (c["index"] ?? 0) === 0)
      if (!isRecord(choice)) return Result.succeed([])
      const out: Array<ProviderDelta> = []
      const delta = choice["delta"]
      if (isRecord(delta)) {
        const content = delta["content"]
        if (typeof content === "string" && content !== "") {
          texts.push(content)
          out.push({ type: "text-delta", delta: content })
        }
        const toolCalls = delta["tool_calls"]
        if (Array.isArray(toolCalls)) {
          for (const [i, raw] of toolCalls.entries()) {
            const problem = readCall(raw, i, out)
            if (problem !== undefined) return Result.fail(invalidEventError(problem, secrets))
          }
        }
      }
      if (choice["finish_reason"] !== undefined && choice["finish_reason"] !== null) finishReason = choice["finish_reason"]
      return Result.succeed(out)
    },
    complete: () => done,
    end: () => {
      if (!done && finishReason === undefined) return Result.fail(incompleteError("end of the completion ([DONE])"))
      return parseChatCompletion({
        choices: [{
          message: {
            content: texts.join(""),
            tool_calls: calls.map((call) => ({
              ...(call.id !== undefined ? { id: call.id } : {}),
              ...(call.type !== undefined ? { type: call.type } : {}),
              function: { ...(call.name !== undefined ? { name: call.name } : {}), arguments: call.args.join("") }
            }))
          }
        }],
        usage
      })
    }
  }
}
