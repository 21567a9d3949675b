/**
 * The `scripted` provider: deterministic answers from a JSON script (the file
 * at `LLM_SCRIPT`), for demos and tests that must not depend on a model.
 *
 * The answer is a pure function of the conversation: no counters, no clock,
 * so every server replica answers a given conversation alike, and a replayed
 * conversation gets the same answer (tool call ids included).
 *
 * Script format (JSON; unknown keys are rejected, so a typo fails loudly):
 *
 * ```jsonc
 * {
 *   "description": "free text, ignored",
 *   "rules": [                      // tried in order; the first whose `when` matches answers
 *     {
 *       "description": "free text, ignored",
 *       "when": {                   // every condition given must hold; no `when` = always
 *         "lastRole": "user",       // role of the last message: system | user | assistant | tool
 *         "contains": "transcribe", // case-insensitive substring of the last message's text
 *                                   // (a tool message without content: its result as text)
 *         "tool": "transcribe_video", // the last message is the result of this tool
 *         "toolError": false        // ...and that result is (true) / is not (false) an error
 *       },
 *       "reply": {
 *         "content": "Here is the transcription: {{lastToolResult}}",
 *         "toolCalls": [{ "name": "transcribe_video", "args": {} }],
 *         "delayMs": 1500,         // optional: answer after this long (0..60000), e.g. a slow sub-agent step
 *         "pieceDelayMs": 80,      // optional: streamed, pause this long between pieces (0..10000)
 *         "usage": { "inputTokens": 120, "outputTokens": 9 }   // optional: the tokens reported (else none)
 *       }
 *     }
 *   ],
 *   "fallback": { "content": "You said: {{lastUserMessage}}" },  // when no rule matches
 *   "transcription": "text the transcriber returns for {{fileName}} ({{byteSize}} bytes)"
 * }
 * ```
 *
 * Placeholders, in `content` and in string values of tool call `args`:
 * `{{lastUserMessage}}` (text of the latest user message) and
 * `{{lastToolResult}}` (the latest tool message's error, or its result: a
 * string as is, `{ "text": … }` as its text, anything else as JSON). In `transcription`: `{{fileName}}`,
 * `{{byteSize}}`. Tool call ids are `call_<number of messages>_<index>`.
 *
 * Streamed (`streamTo`), the same answer comes in pieces, always the same ones:
 * the content word by word (each word with the whitespace after it), then each
 * tool call started and its arguments' JSON in up to three pieces, then
 * `finish`. `delayMs` passes before anything comes, `pieceDelayMs` between
 * two pieces (default 0: all at once), so that a demo, or a test, can watch a
 * streaming answer and stop it midway.
 */
import { Effect, Layer, Schema, Stream } from "effect"
import { readFile } from "node:fs/promises"
import { resolve } from "node:path"
import { ProviderUsage, Role } from "@switchboard/domain"
import type { ChatMessage, ProviderChatParams, ProviderChatResponse, ToolCall } from "@switchboard/domain"
import * as NotConfigured from "../NotConfigured.ts"
import { ProviderAdapter, pushEvents, Transcriber } from "../ProviderAdapter.ts"
import type { ProviderError, ProviderStreamEvent, TranscriptionInput } from "../ProviderAdapter.ts"
import { providerText, toolResultContent } from "../WireParts.ts"

// ---------------------------------------------------------------------------
// Format

const Description = Schema.optionalKey(Schema.String)

export const ScriptedToolCall = Schema.Struct({
  name: Schema.NonEmptyString,
  args: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})

export const ScriptedReply = Schema.Struct({
  content: Schema.optionalKey(Schema.String),
  toolCalls: Schema.optionalKey(Schema.Array(ScriptedToolCall)),
  /** Wait this long before answering: a demo's sub-agent then shows its activity live. */
  delayMs: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 60_000 }))),
  /** Streamed, wait this long between two pieces: a demo's answer then visibly streams, and can be stopped. */
  pieceDelayMs: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 10_000 }))),
  /** The tokens this answer reports, as a provider would (token usage, budgets, the stream's `finish`); none without. */
  usage: Schema.optionalKey(ProviderUsage)
})
export type ScriptedReply = typeof ScriptedReply.Type

export const ScriptedCondition = Schema.Struct({
  lastRole: Schema.optionalKey(Role),
  contains: Schema.optionalKey(Schema.String),
  tool: Schema.optionalKey(Schema.String),
  toolError: Schema.optionalKey(Schema.Boolean)
})
export type ScriptedCondition = typeof ScriptedCondition.Type

export const ScriptedRule = Schema.Struct({
  description: Description,
  when: Schema.optionalKey(ScriptedCondition),
  reply: ScriptedReply
})

export const Script = Schema.Struct({
  description: Description,
  rules: Schema.optionalKey(Schema.Array(ScriptedRule)),
  fallback: Schema.optionalKey(ScriptedReply),
  transcription: Schema.optionalKey(Schema.String)
})
export type Script = typeof Script.Type

/** When no rule matches and the script has no `fallback`. */
export const DEFAULT_FALLBACK = "(the script has no reply for this conversation)"

// ---------------------------------------------------------------------------
// Answering (pure)

const lastOf = <A>(items: ReadonlyArray<A>, predicate: (a: A) => boolean): A | undefined => {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as A
    if (predicate(item)) return item
  }
  return undefined
}

/** The text a rule's `contains` looks into: what a provider would read of the message. */
const matchText = (message: ChatMessage): string =>
  message.role === "tool" && message.content === "" && message.toolResult !== undefined
    ? toolResultContent(message.toolResult)
    : providerText(message)

const toolResultText = (message: ChatMessage | undefined): string => {
  const result = message?.toolResult
  if (result === undefined) return ""
  if (result.error) return result.error
  const value = result.result
  if (typeof value === "string") return value
  // `transcribe_video` answers `{ text }`: a demo should show the text, not its JSON envelope.
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const text = (value as Record<string, unknown>)["text"]
    if (typeof text === "string" && Object.keys(value).length === 1) return text
  }
  return JSON.stringify(value ?? null)
}

export const matches = (condition: ScriptedCondition | undefined, messages: ReadonlyArray<ChatMessage>): boolean => {
  if (condition === undefined) return true
  const last = messages.at(-1)
  if (condition.lastRole !== undefined && last?.role !== condition.lastRole) return false
  if (condition.contains !== undefined) {
    if (last === undefined || !matchText(last).toLowerCase().includes(condition.contains.toLowerCase())) return false
  }
  if (condition.tool !== undefined || condition.toolError !== undefined) {
    const result = last?.role === "tool" ? last.toolResult : undefined
    if (result === undefined) return false
    if (condition.tool !== undefined && result.name !== condition.tool) return false
    if (condition.toolError !== undefined && Boolean(result.error) !== condition.toolError) return false
  }
  return true
}

const fill = (template: string, values: Readonly<Record<string, string>>): string =>
  template.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, name: string) => values[name] ?? whole)

const fillDeep = (value: unknown, values: Readonly<Record<string, string>>): unknown => {
  if (typeof value === "string") return fill(value, values)
  if (Array.isArray(value)) return value.map((v) => fillDeep(v, values))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillDeep(v, values)]))
  }
  return value
}

/** The reply a conversation gets: the first matching rule's, else the fallback. */
export const replyFor = (script: Script, messages: ReadonlyArray<ChatMessage>): ScriptedReply =>
  (script.rules ?? []).find((r) => matches(r.when, messages))?.reply ?? script.fallback ?? { content: DEFAULT_FALLBACK }

/** The scripted answer to a conversation: the first matching rule's reply, else the fallback. */
export const answer = (script: Script, params: ProviderChatParams): ProviderChatResponse => {
  const { messages } = params
  const reply = replyFor(script, messages)
  const values = {
    lastUserMessage: (() => {
      const user = lastOf(messages, (m) => m.role === "user")
      return user === undefined ? "" : providerText(user)
    })(),
    lastToolResult: toolResultText(lastOf(messages, (m) => m.role === "tool"))
  }
  const toolCalls: Array<ToolCall> = (reply.toolCalls ?? []).map((call, index) => ({
    id: `call_${messages.length}_${index}`,
    name: call.name,
    args: fillDeep(call.args ?? {}, values) as Record<string, unknown>
  }))
  return {
    content: fill(reply.content ?? "", values),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    ...(reply.usage === undefined ? {} : { usage: reply.usage })
  }
}

/** The content's pieces: each word with the whitespace after it (leading whitespace goes with the first). */
export const wordPieces = (content: string): Array<string> => content.match(/\s*\S+\s*/g) ?? (content === "" ? [] : [content])

/** Arguments' JSON in up to three pieces of near-equal length (whole code points). */
const argumentPieces = (json: string): Array<string> => {
  const chars = Array.from(json)
  const cuts = [0, Math.floor(chars.length / 3), Math.floor(2 * chars.length / 3), chars.length]
  return cuts.slice(1).map((end, i) => chars.slice(cuts[i], end).join("")).filter((piece) => piece !== "")
}

/** An answer as its stream: the pieces in order, then `finish` with the answer itself. */
export const answerEvents = (response: ProviderChatResponse): Array<ProviderStreamEvent> => [
  ...wordPieces(response.content).map((delta): ProviderStreamEvent => ({ type: "text-delta", delta })),
  ...(response.toolCalls ?? []).flatMap((call): Array<ProviderStreamEvent> => [
    { type: "tool-call-start", id: call.id, name: call.name },
    ...argumentPieces(JSON.stringify(call.args)).map((delta): ProviderStreamEvent => ({ type: "tool-call-delta", id: call.id, delta }))
  ]),
  { type: "finish", response }
]

const isPiece = (event: ProviderStreamEvent): boolean => event.type === "text-delta" || event.type === "tool-call-delta"

/** The scripted answer streamed: `delayMs` before anything, `pieceDelayMs` between two pieces. */
export const streamAnswer = (script: Script, params: ProviderChatParams): Stream.Stream<ProviderStreamEvent> =>
  Stream.suspend(() => {
    const reply = replyFor(script, params.messages)
    const delayMs = reply.delayMs ?? 0
    const pieceDelayMs = reply.pieceDelayMs ?? 0
    const events = answerEvents(answer(script, params))
    const firstPiece = events.findIndex(isPiece)
    const pauses = events.map((event, i) => i === 0 ? delayMs : isPiece(event) && i !== firstPiece ? pieceDelayMs : 0)
    return Stream.fromIterable(events).pipe(
      Stream.mapEffect((event, i) => {
        const pause = pauses[i] ?? 0
        return pause > 0 ? Effect.as(Effect.sleep(pause), event) : Effect.succeed(event)
      })
    )
  })

/** The scripted transcription of an upload: the script's text, or a sentence visibly derived from the file. */
export const transcription = (script: Script, input: TranscriptionInput): string =>
  fill(
    script.transcription ?? "Scripted transcription of {{fileName}} ({{byteSize}} bytes).",
    { fileName: input.fileName, byteSize: String(input.data.byteLength) }
  )

// ---------------------------------------------------------------------------
// Loading and layers

const decodeScript = Schema.decodeUnknownEffect(Script, { onExcessProperty: "error" })

/** Reads and validates the script; any problem is the operator's to fix, hence `NotConfigured`. */
export const loadScript = (path: string): Effect.Effect<Script, ProviderError> => {
  const absolute = resolve(path)
  const problem = (detail: string) => NotConfigured.notConfigured(["LLM_SCRIPT"], `the LLM_SCRIPT file ${absolute} ${detail}`)
  return Effect.tryPromise({
    try: () => readFile(absolute, "utf8"),
    catch: (e) => problem(`cannot be read: ${e instanceof Error ? e.message : String(e)}`)
  }).pipe(
    Effect.flatMap((text) =>
      Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: (e) => problem(`is not valid JSON: ${e instanceof Error ? e.message : String(e)}`)
      })
    ),
    Effect.flatMap((json) =>
      decodeScript(json).pipe(
        // One line for the logs: "Expected … at ["rules"][0]…".
        Effect.mapError((e) => problem(`is not a valid script: ${e.message.replace(/\s*\n\s*/g, " ")}`))
      )
    )
  )
}

/** Both services answering from an in-memory script (handy in tests). */
export const layerFromScript = (script: Script): Layer.Layer<ProviderAdapter | Transcriber> =>
  Layer.mergeAll(
    Layer.succeed(ProviderAdapter, (() => {
      const chat = (params: ProviderChatParams) => {
        const delayMs = replyFor(script, params.messages).delayMs ?? 0
        const response = Effect.sync(() => answer(script, params))
        return delayMs > 0 ? Effect.andThen(Effect.sleep(delayMs), response) : response
      }
      return ProviderAdapter.of({ chat, streamTo: (params, sink) => pushEvents(streamAnswer(script, params), sink) })
    })()),
    Layer.succeed(Transcriber, Transcriber.of({ transcribe: (input) => Effect.succeed(transcription(script, input)) }))
  )

/**
 * Both services from the script file, read once when the layer is built, and
 * one line saying how that went. A file that cannot be read stops `npm start`
 * before this (`system/Settings.ts`); one that goes bad after, or does not
 * hold a valid script, does not stop the server: every call then fails with
 * `NotConfigured`, saying what is wrong with the file.
 */
export const layer = (path: string): Layer.Layer<ProviderAdapter | Transcriber> =>
  Layer.unwrap(
    loadScript(path).pipe(
      Effect.matchEffect({
        onFailure: (error) =>
          Effect.logWarning(`${error.message}; chat and transcription calls will fail with 502`).pipe(
            Effect.as(NotConfigured.layer(error))
          ),
        onSuccess: (script) =>
          Effect.logInfo(`LLM provider: scripted, script ${resolve(path)}`).pipe(Effect.as(layerFromScript(script)))
      })
    )
  )
