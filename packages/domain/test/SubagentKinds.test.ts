/**
 * Sub-agent kinds as definitions (docs/subagents.md), the pure parts: the
 * body's checks, the prompt over the input, the result as readable text and in
 * its schema's order, the defined kinds' failure shape and steer.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import {
  buildSubagentSteer,
  definedKindSpec,
  fillSubagentPrompt,
  inSchemaOrder,
  isSubagentFailure,
  jobKindSpecOf,
  readableResult,
  subagentArtifactOf,
  subagentDefinitionOf,
  SubagentBody,
  subagentResultOf,
  subagentToolOf
} from "../src/index.ts"

const body = {
  description: "Check a refund.",
  input: [{ key: "orderId", type: "string", required: true }],
  systemPrompt: "Order {{input.orderId}}, reason {{ input.reason }}, items {{input.items}}.",
  result: { type: "object", properties: { eligible: { type: "boolean" }, note: { type: "string" } } }
} as const

describe("sub-agent kinds", () => {
  it("a body decodes with its defaults; what is wrong is refused with the path", () => {
    const decoded = Schema.decodeUnknownSync(SubagentBody)(body)
    const definition = subagentDefinitionOf("refund-check", decoded)
    assert.deepStrictEqual(
      { kind: definition.kind, tools: definition.tools, maxSteps: definition.maxSteps, builtIn: definition.builtIn },
      { kind: "refund-check", tools: [], maxSteps: 12, builtIn: false }
    )
    assert.deepStrictEqual(subagentToolOf(definition), { name: "refund-check", description: "Check a refund.", parameters: body.input })
    assert.throws(() => Schema.decodeUnknownSync(SubagentBody)({ ...body, tools: ["shell"] }))
    assert.throws(() => Schema.decodeUnknownSync(SubagentBody)({ ...body, maxSteps: 51 }))
    assert.throws(() => Schema.decodeUnknownSync(SubagentBody)({ ...body, timeoutMs: 999 }))
    assert.throws(() => Schema.decodeUnknownSync(SubagentBody)({ ...body, result: { description: "x".repeat(17_000) } }))
  })

  it("fills the prompt from the input in one pass: strings as they are, others as JSON, missing ones empty", () => {
    assert.strictEqual(
      fillSubagentPrompt(body.systemPrompt, { orderId: "{{input.items}}", items: [1, 2] }),
      "Order {{input.items}}, reason , items [1,2]."
    )
  })

  it("shows a result as readable text, and in its schema's order", () => {
    const result = { note: "two\nlines", eligible: true, extra: { list: ["a", { b: null }], empty: [] } }
    assert.strictEqual(
      readableResult(result),
      ["note:", "  two", "  lines", "eligible: true", "extra:", "  list:", "    - a", "    -", "      b: null", "  empty:", "    (none)"].join("\n")
    )
    assert.deepStrictEqual(Object.keys(inSchemaOrder(body.result, result) as object), ["eligible", "note", "extra"])
    assert.deepStrictEqual(
      inSchemaOrder({ type: "array", items: { properties: { b: {}, a: {} } } }, [{ a: 1, b: 2 }]),
      [{ b: 2, a: 1 }]
    )
  })

  it("a defined kind's failure is { error } alone; its steer says the result or the failure", () => {
    const spec = definedKindSpec("refund-check")
    assert.isTrue(spec.isFailure({ error: "no valid submit_result within 12 steps" }))
    assert.isFalse(spec.isFailure({ error: "card declined", code: 4 }))
    assert.deepStrictEqual(spec.failure({}, "timed out"), { error: "timed out" })
    assert.strictEqual(jobKindSpecOf("refund-check").kind, "refund-check")
    assert.isTrue(isSubagentFailure("refund-check", { error: "x" }))

    const steer = buildSubagentSteer({ id: "job_1", kind: "refund-check", toolCallId: "c1" }, { eligible: true })
    assert.strictEqual(steer.content, "The refund-check sub-agent finished. Its result follows; use it as the user asked:\n\neligible: true")
    assert.deepStrictEqual(subagentResultOf(steer), { jobId: "job_1", kind: "refund-check", toolCallId: "c1" })
    assert.deepStrictEqual(subagentArtifactOf(steer), { kind: "refund-check", result: { eligible: true } })
    assert.match(buildSubagentSteer({ id: "job_2", kind: "refund-check", toolCallId: "c2" }, { error: "timed out" }).content, /^The refund-check sub-agent failed: timed out\./)
  })
})
