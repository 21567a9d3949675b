/**
 * The Chat Completions tool loop every sub-agent runs, through the configured
 * `ProviderAdapter`: an isolated context (the sub-agent's own system prompt
 * and messages, never the chat's), the sub-agent's own tools (never the job
 * tools), a cap on rounds.
 *
 * One round is one provider call, a step of the one step loop (`runSteps`).
 * When the answer calls tools, each call is reported as the job's activity
 * line, validated and executed; a tool's
 * failure (bad arguments, an unknown tool, an unreachable page, a demo that
 * throws) is not the loop's failure but the call's result, fed back to the
 * model as `{"error": …}` so it can recover. The loop ends when a tool says
 * the work is finished, when the model answers without calling a tool, or at
 * the cap. Only a provider failure fails the loop.
 */
import { Data, Effect, Schema } from "effect"
import type { ChatMessage, ProviderChatParams, ProviderImage, ToolCall, ToolSchema } from "@switchboard/domain"
import { runSteps, stepCountIs, toolFromSchema } from "@switchboard/domain"
import { ProviderAdapter, publicReason } from "@switchboard/providers"
import type { ProviderError } from "@switchboard/providers"
import { executeTool } from "../../telemetry/GenAi.ts"

/** A tool's failure: its message is what the model reads as the call's error. */
export class ToolFailure extends Data.TaggedError("ToolFailure")<{ readonly message: string }> {}

/** What a successful call gives back. */
export interface ToolOutput {
  /** What the model reads as the call's result (JSON). */
  readonly result: unknown
  /**
   * Images to show the model with its next call (a rendered figure), as a user
   * message after the tool results, since tool results carry text only.
   */
  readonly images?: ReadonlyArray<ProviderImage>
  /** The work is done: end the loop after this round's calls. */
  readonly finish?: boolean
  /**
   * The call waits for a user's decision: the loop ends at once, unanswered, its conversation
   * handed back (`Parked`) to be saved and resumed (`ToolLoopOptions.resume`).
   */
  readonly park?: boolean
}

export interface SubagentTool<A = any> {
  /** What the model is offered, derived from `args`. */
  readonly schema: ToolSchema
  /** Decodes the call's arguments; a decoding error goes back to the model. */
  readonly args: Schema.Codec<A, unknown>
  /** The job's activity line for this call, e.g. `web_search: "sigma.js v3"`. */
  readonly activity: (args: A) => string
  /** `call`: the call being run (its id names it in a saved conversation). */
  readonly execute: (args: A, call: ToolCall) => Effect.Effect<ToolOutput, ToolFailure>
}

/**
 * Builds a tool from the one declaration of its arguments (a `Struct` whose
 * fields carry descriptions): the schema the model is offered is derived from
 * it, and the call's arguments are decoded with it.
 */
export const tool = <A>(definition: {
  readonly name: string
  readonly description: string
  readonly args: Schema.Codec<A, unknown>
  readonly activity: (args: A) => string
  readonly execute: (args: A) => Effect.Effect<ToolOutput, ToolFailure>
}): SubagentTool<A> => {
  const { description, name, ...rest } = definition
  return { schema: toolFromSchema(name, description, definition.args), ...rest }
}

export interface ToolLoopOptions {
  readonly systemPrompt: string
  /** The sub-agent's task: the first (and only initial) user message. */
  readonly task: string
  readonly tools: ReadonlyArray<SubagentTool>
  /** `modelFor(role)`; undefined keeps the adapter's configured model. */
  readonly model: string | undefined
  readonly maxRounds: number
  readonly reportActivity: (line: string) => Effect.Effect<void>
  /**
   * A provider call that carried images failed: may it be retried once
   * without them? (A text-only model's server may refuse image input.)
   */
  readonly retryWithoutImages?: boolean
  /**
   * A parked loop's saved conversation (`Parked`): the loop goes on from it — the last answer's
   * calls not answered yet run first (no provider call for that round), then the model is asked.
   * `rounds`: those it had made; `maxRounds` counts them.
   */
  readonly resume?: { readonly messages: ReadonlyArray<ChatMessage>; readonly rounds: number }
}

export type ToolLoopOutcome =
  /** A tool finished the work. `content` is the text of the model's last answer. */
  | { readonly _tag: "Finished"; readonly content: string; readonly rounds: number }
  /** The model answered without calling a tool. */
  | { readonly _tag: "Answered"; readonly content: string; readonly rounds: number }
  /** `maxRounds` provider calls and the work is neither finished nor answered. */
  | { readonly _tag: "RoundCap"; readonly content: string; readonly rounds: number }
  /** A call waits for a user's decision (`ToolOutput.park`): the conversation so far, to resume from. */
  | {
    readonly _tag: "Parked"
    readonly content: string
    readonly rounds: number
    readonly messages: ReadonlyArray<ChatMessage>
    /** The call that waits. */
    readonly call: ToolCall
  }

/** One line of activity text: single-line and bounded, as a job record's `activity` is shown in one line. */
export const activityLine = (text: string, max = 120): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

const describeSchemaError = (error: unknown): string =>
  error instanceof Error ? error.message.replace(/\s+/g, " ") : String(error)

/** A tool message answering one call. */
const toolMessage = (
  call: ToolCall,
  outcome: { readonly result: unknown } | { readonly error: string },
  id: string
): ChatMessage => ({
  id,
  role: "tool",
  content: "",
  toolResult: "error" in outcome
    ? { toolCallId: call.id, name: call.name, error: outcome.error }
    : { toolCallId: call.id, name: call.name, result: outcome.result as never },
  timestamp: 0
})

/** Runs one call: unknown tool, bad arguments and the tool's own failure all become an `{ error }` for the model. */
const runCall = (
  tools: ReadonlyMap<string, SubagentTool>,
  call: ToolCall,
  reportActivity: ToolLoopOptions["reportActivity"]
): Effect.Effect<{ readonly outcome: { result: unknown } | { error: string }; readonly output?: ToolOutput }> =>
  Effect.gen(function*() {
    const found = tools.get(call.name)
    if (found === undefined) {
      return { outcome: { error: `unknown tool ${call.name}; the tools are: ${[...tools.keys()].join(", ")}` } }
    }
    if (call.invalidArgs !== undefined) return { outcome: { error: `invalid arguments: ${call.invalidArgs}` } }
    const decoded = yield* Schema.decodeUnknownEffect(found.args)(call.args).pipe(Effect.result)
    if (decoded._tag === "Failure") {
      return { outcome: { error: `invalid arguments: ${describeSchemaError(decoded.failure)}` } }
    }
    yield* reportActivity(activityLine(found.activity(decoded.success)))
    const executed = yield* found.execute(decoded.success, call).pipe(Effect.result)
    if (executed._tag === "Failure") return { outcome: { error: executed.failure.message } }
    return { outcome: { result: executed.success.result }, output: executed.success }
  })

/**
 * A failed provider call as a sub-agent's result says it: the kind of failure
 * (`status_401`, `timeout`, …), which the user and the chat's model see; the
 * provider's own words stay in the server's log.
 */
export const providerFailureNote = (error: ProviderError): Effect.Effect<string> =>
  Effect.logWarning("sub-agent provider call failed", { reason: error.reason, status: error.status, cause: error.message }).pipe(
    Effect.as(
      error.reason === "BudgetExceeded"
        ? "its user's daily token budget is used up (USER_DAILY_TOKENS)"
        : `the model provider failed (${publicReason(error)})`
    )
  )

export const runToolLoop = (options: ToolLoopOptions): Effect.Effect<ToolLoopOutcome, ProviderError, ProviderAdapter> =>
  Effect.gen(function*() {
    const provider = yield* ProviderAdapter
    const tools = new Map(options.tools.map((t) => [t.schema.name, t]))
    const toolSchemas = options.tools.map((t) => t.schema)
    // Resumed: the saved conversation up to its last answer, which is replayed as the first round
    // (its calls answered already keep their answers; the others run).
    const saved = options.resume?.messages ?? []
    const replayAt = saved.findLastIndex((m) => m.role === "assistant")
    const replay = options.resume === undefined || replayAt < 0 ? undefined : saved[replayAt]!
    const replayed = new Map(replay === undefined ? [] : saved.slice(replayAt + 1).flatMap((m) =>
      m.toolResult === undefined ? [] : [[m.toolResult.toolCallId, m] as const]
    ))
    const before = options.resume === undefined ? 0 : options.resume.rounds - (replay === undefined ? 0 : 1)
    const messages: Array<ChatMessage> = replay === undefined
      ? [...saved.length > 0 ? saved : [{ id: "task", role: "user" as const, content: options.task, timestamp: 0 }]]
      : saved.slice(0, replayAt)
    let images: ReadonlyArray<ProviderImage> = []
    let parked: ToolCall | undefined

    const call = (params: ProviderChatParams) => {
      const attempt = provider.chat(params)
      if (params.images === undefined || options.retryWithoutImages !== true) return attempt
      // A server that refuses image input answers a 4xx: ask again, telling the model it could not see.
      return attempt.pipe(Effect.catchIf(
        (e) => e.reason === "Status" && e.status !== undefined && e.status >= 400 && e.status < 500,
        () => {
          const { images: _dropped, ...rest } = params
          const last = rest.messages[rest.messages.length - 1]!
          return provider.chat({
            ...rest,
            messages: [
              ...rest.messages.slice(0, -1),
              { ...last, content: `${last.content}\n(The image could not be shown: this model does not take images.)` }
            ]
          })
        }
      ))
    }

    // Every call is the sub-agent's: an unknown tool's is answered with an error it can recover from.
    const end = yield* runSteps({
      ask: (step) => {
        if (step === 1 && replay !== undefined) return Effect.succeed({ content: replay.content, toolCalls: replay.toolCalls ?? [] })
        const shown = images
        images = []
        return call({
          // A copy: the conversation grows after the call, and a provider may keep what it was given.
          messages: [...messages],
          systemPrompt: options.systemPrompt,
          toolSchemas,
          ...(options.model !== undefined ? { model: options.model } : {}),
          ...(shown.length > 0 ? { images: shown } : {})
        })
      },
      owns: () => true,
      run: ({ answer, owned, step }) =>
        Effect.gen(function*() {
          messages.push({ id: `assistant_${before + step}`, role: "assistant", content: answer.content, toolCalls: owned, timestamp: 0 })
          let finished = false
          const shown: Array<ProviderImage> = []
          for (const [index, toolCall] of owned.entries()) {
            // After a finishing call, the rest of the round is not run (and needs no answer: the loop ends).
            if (finished) break
            const answered = step === 1 ? replayed.get(toolCall.id) : undefined
            if (answered !== undefined) {
              messages.push(answered)
              continue
            }
            const { outcome, output } = yield* runCall(tools, toolCall, options.reportActivity).pipe(executeTool(toolCall, (r) => r.outcome))
            if (output?.park === true) {
              parked = toolCall
              return { finished: false, parked: true }
            }
            messages.push(toolMessage(toolCall, outcome, `tool_${before + step}_${index}`))
            if (output?.images !== undefined) shown.push(...output.images)
            if (output?.finish === true) finished = true
          }
          if (!finished && shown.length > 0) {
            images = shown
            messages.push({
              id: `images_${step}`,
              role: "user",
              content: "The image(s) your last tool call produced are attached.",
              timestamp: 0
            })
          }
          return { finished, parked: false }
        }),
      stopWhen: [
        { reason: "Parked", when: ({ ran }) => ran.parked },
        { reason: "Finished", when: ({ ran }) => ran.finished },
        stepCountIs(options.maxRounds - before, "RoundCap")
      ]
    })
    const content = end.answer.content
    const rounds = before + end.step
    if (end.reason === "Parked" && parked !== undefined) return { _tag: "Parked", content, rounds, messages: [...messages], call: parked }
    return end.reason === "answered" || end.reason === "Parked"
      ? { _tag: "Answered", content, rounds }
      : { _tag: end.reason, content, rounds }
  })
