/**
 * Spans with the OpenTelemetry GenAI semantic conventions, and the provider
 * call metrics (docs/observability.md):
 *
 * - `invoke_agent`: a turn (a chat turn, a wake turn delivering a steer, a
 *   sub-agent's run), with `gen_ai.agent.name`, `gen_ai.conversation.id` (the
 *   chat) and `switchboard.job_id`; the usage of its provider calls summed;
 * - `chat {model}`: one provider call, with `gen_ai.provider.name`,
 *   `gen_ai.request.model` and the `gen_ai.usage.*` the provider reported;
 * - `execute_tool {name}`: a tool the server executes (a job tool of a turn,
 *   a sub-agent's tool), with `gen_ai.tool.name` and `gen_ai.tool.call.id`.
 *
 * The ids of what a call serves (`switchboard.job_id`, `switchboard.task_id`,
 * `switchboard.host_id`, the chat) come from the `invokeAgent` around it (a
 * `Context.Reference`, which also says the call's kind for the metrics).
 * Prompts, messages, tool arguments and results are added only with
 * `OTEL_CAPTURE_CONTENT=on` (`CaptureContent`); never a key or a token.
 *
 * With tracing off (no `OTEL_EXPORTER_OTLP_ENDPOINT`, `TRACING` off), a
 * wrapper makes no span at all (see `traced` in `@switchboard/providers`): a provider
 * call costs a clock read and a few counter increments, a turn one reference
 * provided.
 */
import type { ChatMessage, ProviderChatParams, ProviderChatResponse, ProviderUsage, ToolCall } from "@switchboard/domain"
import { Clock, Context, Effect, Exit, References } from "effect"
import type { Tracer } from "effect"
import { ProviderAdapter } from "@switchboard/providers"
import type { ProviderError } from "@switchboard/providers"
import type { CallKind } from "./Metrics.ts"
import { recordProviderCall } from "./Metrics.ts"

/** Whether spans may carry prompts, messages and tool arguments and results (`OTEL_CAPTURE_CONTENT=on`). */
export const CaptureContent = Context.Reference<boolean>("switchboard/server/telemetry/CaptureContent", {
  defaultValue: () => false
})

/**
 * What a turn serves, as `invokeAgent` says it to the calls under it: their spans and metrics, and
 * the usage ledger's counts (`usage/UsageLedger.ts`).
 */
export interface AgentScope {
  readonly kind: CallKind
  readonly agent?: string | undefined
  /** Whose request, wake turn or job it is (a planner decision is no user's). */
  readonly userId?: string | undefined
  readonly chatId?: string | undefined
  readonly jobId?: string | undefined
  readonly taskId?: string | undefined
  readonly hostId?: string | undefined
  readonly profileId?: string | undefined
}

interface CurrentAgent extends AgentScope {
  /** The turn's span (tracing on): its provider calls add their usage to it. */
  readonly span: Tracer.Span | undefined
  usage: ProviderUsage | undefined
}

const Current = Context.Reference<CurrentAgent | undefined>("switchboard/server/telemetry/CurrentAgent", {
  defaultValue: () => undefined
})

/** What the calls of the current fiber serve, as the enclosing `invokeAgent` said (none outside one). */
export const currentScope: Effect.Effect<AgentScope | undefined> = Effect.withFiber((fiber) => Effect.succeed(fiber.getRef(Current)))


/** Content attributes are cut at this many characters: a span stays a span, not a transcript store. */
export const MAX_CONTENT_CHARS = 16 * 1024

const clip = (text: string) => text.length > MAX_CONTENT_CHARS ? `${text.slice(0, MAX_CONTENT_CHARS)}…` : text
const json = (value: unknown) => clip(JSON.stringify(value) ?? "null")

/** `gen_ai.provider.name`: the conventions' well-known names (an OpenAI-compatible API is `openai`). */
export const genAiProviderName = (provider: string) => provider === "openai-compatible" ? "openai" : provider

const idAttributes = (scope: AgentScope | undefined): Record<string, string> => {
  const attributes: Record<string, string> = {}
  if (scope?.chatId !== undefined) attributes["gen_ai.conversation.id"] = scope.chatId
  if (scope?.jobId !== undefined) attributes["switchboard.job_id"] = scope.jobId
  if (scope?.taskId !== undefined) attributes["switchboard.task_id"] = scope.taskId
  if (scope?.hostId !== undefined) attributes["switchboard.host_id"] = scope.hostId
  return attributes
}

const addUsage = (a: ProviderUsage | undefined, b: ProviderUsage): ProviderUsage =>
  a === undefined ? b : { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens }

const setUsage = (span: Tracer.Span, usage: ProviderUsage) => {
  span.attribute("gen_ai.usage.input_tokens", usage.inputTokens)
  span.attribute("gen_ai.usage.output_tokens", usage.outputTokens)
}

/** The span, as its body's parent, ended with the body (no stack trace captured: it is the caller's, not the work's). */
const inSpan = <A, E, R>(
  name: string,
  options: Tracer.SpanOptionsNoTrace,
  body: (span: Tracer.Span) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.useSpan(name, options, (span) =>
    Effect.withParentSpan(body(span), span, { captureStackTrace: false }))

/**
 * A turn: `invoke_agent` when tracing, and in every case the scope its
 * provider calls are counted under (`kind`) and named by (the ids).
 */
export const invokeAgent = (scope: AgentScope) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    if (!fiber.getRef(References.TracerEnabled)) {
      return Effect.provideService(self, Current, { ...scope, span: undefined, usage: undefined })
    }
    const attributes: Record<string, unknown> = {
      "gen_ai.operation.name": "invoke_agent",
      "switchboard.turn_kind": scope.kind,
      ...idAttributes(scope),
      ...(scope.agent === undefined ? {} : { "gen_ai.agent.name": scope.agent })
    }
    return inSpan("invoke_agent", { kind: "internal", attributes }, (span) => {
      const current: CurrentAgent = { ...scope, span, usage: undefined }
      return Effect.provideService(self, Current, current).pipe(
        Effect.onExit(() =>
          Effect.sync(() => {
            if (current.usage !== undefined) setUsage(span, current.usage)
          })
        )
      )
    })
  })

/** Semantic-convention messages: each with its role and its parts (text, tool calls, a tool's response). */
const messagesOf = (messages: ReadonlyArray<ChatMessage>) =>
  messages.map((m) => ({
    role: m.role,
    parts: [
      ...(m.content === "" ? [] : [{ type: "text", content: m.content }]),
      ...(m.toolCalls ?? []).map((c) => ({ type: "tool_call", id: c.id, name: c.name, arguments: c.args })),
      ...(m.toolResult === undefined
        ? []
        : [{ type: "tool_call_response", id: m.toolResult.toolCallId, response: m.toolResult.error ?? m.toolResult.result ?? null }])
    ]
  }))

const answerOf = (response: ProviderChatResponse) => [{
  role: "assistant",
  parts: [
    ...(response.content === "" ? [] : [{ type: "text", content: response.content }]),
    ...(response.toolCalls ?? []).map((c) => ({ type: "tool_call", id: c.id, name: c.name, arguments: c.args }))
  ]
}]

/** What identifies a provider call beside its scope: the provider as configured and the model asked for. */
export interface CallTarget {
  readonly provider: string
  readonly model: string
}

/** Where a call that answered is counted (the usage ledger's `count`, `usage/UsageLedger.ts`). */
export type CountCall = (scope: AgentScope, model: string, usage: ProviderUsage | undefined) => void

/**
 * One provider call, measured (`switchboard_provider_*`), counted by `count`
 * when it answered (the usage ledger), and, when tracing, a `chat {model}`
 * span. `scope`: what it serves when no `invokeAgent` encloses it (the
 * planner's decision); outside both, a chat turn's.
 */
export const providerCall = (target: CallTarget, params: ProviderChatParams | undefined, count: CountCall, scope?: AgentScope) =>
<E, R>(self: Effect.Effect<ProviderChatResponse, E, R>): Effect.Effect<ProviderChatResponse, E, R> =>
  Effect.withFiber((fiber) => {
    const current = fiber.getRef(Current)
    const served = scope ?? current
    const call = { kind: served?.kind ?? "chat", provider: target.provider, model: target.model }
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.currentTimeNanosUnsafe()
    const ended = (exit: Exit.Exit<ProviderChatResponse, E>, span: Tracer.Span | undefined) => {
      const usage = Exit.isSuccess(exit) ? exit.value.usage : undefined
      recordProviderCall(call, Exit.isSuccess(exit), Number(clock.currentTimeNanosUnsafe() - start) / 1e9, usage)
      if (Exit.isSuccess(exit)) count(served ?? CHAT, target.model, usage)
      if (span === undefined) return
      if (usage !== undefined) {
        setUsage(span, usage)
        if (current !== undefined && scope === undefined) current.usage = addUsage(current.usage, usage)
      }
      if (Exit.isSuccess(exit) && fiber.getRef(CaptureContent)) span.attribute("gen_ai.output.messages", json(answerOf(exit.value)))
      if (Exit.isFailure(exit)) {
        const error = exit.cause.reasons.find((r) => r._tag === "Fail")
        const reason = (error as { error?: Partial<ProviderError> } | undefined)?.error?.reason
        span.attribute("error.type", reason ?? (Exit.hasInterrupts(exit) ? "cancelled" : "_OTHER"))
      }
    }
    if (!fiber.getRef(References.TracerEnabled)) {
      return Effect.onExit(self, (exit) => Effect.sync(() => ended(exit, undefined)))
    }
    const attributes: Record<string, unknown> = {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": genAiProviderName(target.provider),
      "gen_ai.request.model": target.model,
      "switchboard.call_kind": call.kind,
      ...idAttributes(served)
    }
    if (params !== undefined && fiber.getRef(CaptureContent)) {
      attributes["gen_ai.system_instructions"] = json([{ type: "text", content: params.systemPrompt }])
      attributes["gen_ai.input.messages"] = json(messagesOf(params.messages))
    }
    // The turn's span names the provider and model its calls went to.
    if (current?.span !== undefined && scope === undefined) {
      current.span.attribute("gen_ai.provider.name", attributes["gen_ai.provider.name"])
      current.span.attribute("gen_ai.request.model", target.model)
    }
    return inSpan(`chat ${target.model}`, { kind: "client", attributes }, (span) =>
      Effect.onExit(self, (exit) => Effect.sync(() => ended(exit, span))))
  })

const CHAT: AgentScope = { kind: "chat" }

/** The adapter with every call through `providerCall`; `target`: the configured provider and model. */
export const observeAdapter = (adapter: ProviderAdapter["Service"], target: CallTarget, count: CountCall): ProviderAdapter["Service"] =>
  ProviderAdapter.of({
    chat: (params) =>
      adapter.chat(params).pipe(providerCall(params.model === undefined ? target : { ...target, model: params.model }, params, count)),
    streamTo: (params, sink) =>
      adapter.streamTo(params, sink).pipe(
        providerCall(params.model === undefined ? target : { ...target, model: params.model }, params, count)
      )
  })

const toolAttributes = (call: ToolCall, capture: boolean, scope: AgentScope | undefined): Record<string, unknown> => ({
  "gen_ai.operation.name": "execute_tool",
  "gen_ai.tool.name": call.name,
  "gen_ai.tool.call.id": call.id,
  "gen_ai.tool.type": "function",
  ...idAttributes(scope),
  ...(capture ? { "gen_ai.tool.call.arguments": json(call.invalidArgs ?? call.args) } : {})
})

export type ToolOutcome = { readonly result: unknown } | { readonly error: string }

const endTool = (span: Tracer.Span, outcome: ToolOutcome | undefined, capture: boolean) => {
  if (outcome === undefined) return
  if ("error" in outcome) span.attribute("error.type", "tool_error")
  if (capture) span.attribute("gen_ai.tool.call.result", json("error" in outcome ? { error: outcome.error } : outcome.result))
}

/** A tool the server executes itself (a sub-agent's): `execute_tool {name}` when tracing. */
export const executeTool = <A>(call: ToolCall, outcomeOf: (done: A) => ToolOutcome) =>
<E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    if (!fiber.getRef(References.TracerEnabled)) return self
    const capture = fiber.getRef(CaptureContent)
    return inSpan(`execute_tool ${call.name}`, { kind: "internal", attributes: toolAttributes(call, capture, fiber.getRef(Current)) }, (span) =>
      Effect.tap(self, (done) => Effect.sync(() => endTool(span, outcomeOf(done), capture))))
  })

/**
 * Calls executed together (a turn's server tools: one statement records their jobs), an
 * `execute_tool {name}` span each when tracing, sharing their time; `ended` reads each call's
 * outcome and the job it dispatched, if any, from what they gave.
 */
export const executeTools = <A>(
  calls: ReadonlyArray<ToolCall>,
  chatId: string,
  ended: (done: A, call: ToolCall) => { readonly outcome?: ToolOutcome | undefined; readonly jobId?: string | undefined }
) =>
<E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    if (!fiber.getRef(References.TracerEnabled) || calls.length === 0) return self
    const capture = fiber.getRef(CaptureContent)
    const scope = fiber.getRef(Current) ?? { kind: "chat", chatId }
    return Effect.gen(function*() {
      const spans = yield* Effect.forEach(calls, (call) =>
        Effect.makeSpan(`execute_tool ${call.name}`, { kind: "internal", attributes: toolAttributes(call, capture, scope) }))
      const exit = yield* Effect.exit(self)
      const end = fiber.getRef(Clock.Clock).currentTimeNanosUnsafe()
      calls.forEach((call, i) => {
        const span = spans[i]!
        if (Exit.isSuccess(exit)) {
          const { jobId, outcome } = ended(exit.value, call)
          if (jobId !== undefined) span.attribute("switchboard.job_id", jobId)
          endTool(span, outcome, capture)
        }
        span.end(end, exit)
      })
      return yield* exit
    })
  })
