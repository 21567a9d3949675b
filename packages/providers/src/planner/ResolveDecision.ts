/**
 * From a provider's answer to one planner decision, or to the reason there is
 * none (docs/planner.md, "The decision"). Pure: the decision
 * endpoint uses it on the cloud side, and a host agent's `--transport direct`
 * on its own provider answers, so both refuse exactly the same answers.
 *
 * A decision is exactly one tool call, named after one of the request's tools,
 * whose arguments are a JSON object. Nothing is ever repaired or guessed: text
 * instead of a call, two calls, an unknown name or unparsable arguments are
 * each a failure the caller must treat as a failed step.
 */
import { InvalidToolCall, MultipleToolCalls, NoToolCall } from "@switchboard/domain"
import type { JsonObject, ProviderChatResponse } from "@switchboard/domain"
import { Result } from "effect"

export interface ResolvedDecision {
  readonly toolName: string
  readonly arguments: JsonObject
}

export type DecisionFailure = NoToolCall | MultipleToolCalls | InvalidToolCall

/** The one tool call of `response`, or the contract's failure (`no_tool_call`, `multiple_tool_calls`, `invalid_tool_call`). */
export const resolveDecision = (
  response: ProviderChatResponse,
  tools: ReadonlyArray<{ readonly name: string }>
): Result.Result<ResolvedDecision, DecisionFailure> => {
  const calls = response.toolCalls ?? []
  if (calls.length === 0) {
    return Result.fail(new NoToolCall({ error: "The provider answered without a tool call" }))
  }
  if (calls.length > 1) {
    return Result.fail(new MultipleToolCalls({
      error: `The provider answered with ${calls.length} tool calls (${calls.map((c) => c.name).join(", ")}); exactly one is required`
    }))
  }
  const call = calls[0]!
  if (!tools.some((tool) => tool.name === call.name)) {
    return Result.fail(new InvalidToolCall({
      error: `The provider called ${JSON.stringify(call.name)}, which is not one of the request's tools (${tools.map((t) => t.name).join(", ")})`
    }))
  }
  if (call.invalidArgs !== undefined) {
    return Result.fail(new InvalidToolCall({ error: `The arguments of ${call.name} are unusable: ${call.invalidArgs}` }))
  }
  return Result.succeed({ toolName: call.name, arguments: call.args })
}
