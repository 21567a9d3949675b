/** The pure decision resolver: exactly one call, to a known tool, with object arguments; anything else a failure. */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { resolveDecision } from "../../src/planner/ResolveDecision.ts"

const tools = [{ name: "click" }, { name: "finish" }]
const call = (name: string, args: Record<string, unknown> = {}, invalidArgs?: string) => ({
  id: `call_${name}`,
  name,
  args,
  ...(invalidArgs === undefined ? {} : { invalidArgs })
})
const codeOf = (r: ReturnType<typeof resolveDecision>) => Result.isFailure(r) ? r.failure.code : "ok"

describe("resolveDecision", () => {
  it("one call to a known tool with object arguments is the decision", () => {
    const r = resolveDecision({ content: "", toolCalls: [call("click", { x: 1 })] }, tools)
    assert.deepStrictEqual(r, Result.succeed({ toolName: "click", arguments: { x: 1 } }))
  })
  it("text without a call is no_tool_call", () => {
    assert.strictEqual(codeOf(resolveDecision({ content: "I would click" }, tools)), "no_tool_call")
    assert.strictEqual(codeOf(resolveDecision({ content: "", toolCalls: [] }, tools)), "no_tool_call")
  })
  it("two calls are multiple_tool_calls", () => {
    assert.strictEqual(codeOf(resolveDecision({ content: "", toolCalls: [call("click"), call("finish")] }, tools)), "multiple_tool_calls")
  })
  it("a name not among the tools is invalid_tool_call", () => {
    assert.strictEqual(codeOf(resolveDecision({ content: "", toolCalls: [call("rm_rf")] }, tools)), "invalid_tool_call")
  })
  it("arguments that are not a JSON object are invalid_tool_call", () => {
    const r = resolveDecision({ content: "", toolCalls: [call("click", {}, "arguments are not valid JSON: Unexpected token")] }, tools)
    assert.strictEqual(codeOf(r), "invalid_tool_call")
    assert.include(Result.isFailure(r) ? r.failure.error : "", "not valid JSON")
  })
})
