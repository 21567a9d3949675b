import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import {
  buildSubagentSteer,
  ChatMessage,
  isSubagentFailure,
  steerDelivered,
  subagentFailure
} from "../src/index.ts"

const job = { id: "job1", kind: "research" as const, toolCallId: "call_7" }

describe("sub-agent steer messages (the spec's pure helpers)", () => {
  it("a steer is a valid user-role chat message: text part = content, artifact in a data part, marker in metadata", () => {
    const result = { brief: "Sigma.js v3 renders with WebGL.", sources: [{ title: "Sigma", url: "https://sigmajs.org" }] }
    const steer = buildSubagentSteer(job, result, 42)
    assert.strictEqual(steer.id, "steer_job1")
    assert.strictEqual(steer.role, "user")
    assert.strictEqual(steer.timestamp, 42)
    assert.deepStrictEqual(steer.metadata, { subagentResult: { jobId: "job1", kind: "research", toolCallId: "call_7" } })
    assert.deepStrictEqual(steer.parts?.[0], { type: "text", text: steer.content })
    assert.deepStrictEqual(steer.parts?.[1], { type: "data-subagent-artifact", data: { kind: "research", result } })
    assert.match(steer.content, /^Research complete — the researcher's full brief follows\./)
    assert.include(steer.content, result.brief)
    // It passes the wire schema, so it can be persisted and served like any message.
    Schema.decodeUnknownSync(ChatMessage)(steer)
  })

  it("failure shapes are recognised per kind and steered with the fallback advice", () => {
    const research = subagentFailure("research", { question: "q" }, "no search backend answered")
    const demo = subagentFailure("demo", { title: "Orbits", brief: "b" }, "the page threw TypeError")
    const visual = subagentFailure("visual", { brief: "b" }, "the SVG did not parse")
    assert.isTrue(isSubagentFailure("research", research))
    assert.isTrue(isSubagentFailure("demo", demo))
    assert.isTrue(isSubagentFailure("visual", visual))
    assert.isFalse(isSubagentFailure("visual", { svg: "<svg/>" }))
    assert.isFalse(isSubagentFailure("research", { brief: "Research failed: but with sources", sources: [{ title: "t", url: "u" }] }))
    assert.match(buildSubagentSteer({ ...job, kind: "demo" }, demo).content, /^The demo "Orbits" could not be built: the page threw TypeError\./)
    assert.match(buildSubagentSteer({ ...job, kind: "visual" }, visual).content, /^The figure could not be made: the SVG did not parse\./)
    assert.match(buildSubagentSteer(job, research).content, /flag the uncertainty to the learner\.$/)
  })

  it("steerDelivered finds a job's steer by its metadata marker", () => {
    const steer = buildSubagentSteer({ ...job, kind: "visual" }, { svg: "<svg/>" })
    const other: ChatMessage = { id: "u1", role: "user", content: "hi", timestamp: 1 }
    assert.isTrue(steerDelivered([other, steer], "job1"))
    assert.isFalse(steerDelivered([other, steer], "job2"))
    assert.isFalse(steerDelivered([other], "job1"))
  })
})
