/**
 * A job's activity line is never empty: it says what the job is to do from
 * its creation (`researching: "…"`), what its sub-agent does while it runs
 * (the tool lines), and what it did once its result is stored (`done: 3
 * sources`, `done: demo "…"`, `done: figure`, `error: …`) — also when the
 * sub-agent answered without calling any tool, which used to leave it empty.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import type { JobKind, JobRecord, ProviderChatParams, ProviderChatResponse, SubagentResult } from "@switchboard/domain"
import { subagentFailure } from "@switchboard/domain"
import { Deferred, Effect } from "effect"
import { finalActivity, startActivity } from "../../src/jobs/JobActivity.ts"
import * as RealSubagents from "../../src/jobs/subagents/RealSubagents.ts"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { makeFakeSubagents } from "../support/FakeSubagents.ts"
import { chat, eventually, jobsOf, settled, teacher, user } from "../support/JobsHelpers.ts"
import { layerTestServer } from "../support/TestServer.ts"
import { settings } from "./subagents/Harness.ts"

const inputs = {
  research: { question: "sigma.js v3" },
  demo: { title: "Pendulum", brief: "A pendulum with a length slider." },
  visual: { brief: "A labelled pendulum." }
} as const

/**
 * The chat's model: "<kind> …" dispatches one job of that kind with the input above; the sub-agents'
 * own calls (a model of their own) are answered by `subagent`; everything else as the teacher.
 */
const script = (subagent: (params: ProviderChatParams) => ProviderChatResponse) => (params: ProviderChatParams) => {
  if (params.model !== undefined && params.model.endsWith("-model")) return Effect.succeed(subagent(params))
  const last = params.messages.at(-1)
  const kind = last?.role === "user" ? last.content.split(" ")[0] : undefined
  if (kind === "research" || kind === "demo" || kind === "visual") {
    return Effect.succeed<ProviderChatResponse>({
      content: "",
      toolCalls: [{ id: `call_${params.messages.length}`, name: kind, args: inputs[kind] }]
    })
  }
  return Effect.succeed(teacher(params))
}

const dispatch = (chatId: string, kind: JobKind) =>
  Effect.gen(function*() {
    const res = yield* chat(chatId, [user(`${chatId}-u1`, kind === "research" ? "research sigma.js v3" : `${kind} please`)])
    assert.strictEqual(res.status, 200, res.text)
    return res.json.jobs[0].id as string
  })

const onlyJob = (chatId: string) => jobsOf(chatId).pipe(Effect.map((jobs) => jobs[0] as JobRecord))

describe("the activity line's ends", () => {
  it("start: what the job is to do, from its input (bounded, one line)", () => {
    assert.strictEqual(startActivity("research", inputs.research), `researching: "sigma.js v3"`)
    assert.strictEqual(startActivity("demo", inputs.demo), `building demo: "Pendulum"`)
    assert.strictEqual(startActivity("visual", inputs.visual), `drawing: "A labelled pendulum."`)
    assert.strictEqual(startActivity("research", { question: "a\nlong " + "q".repeat(300) }).length, 120)
    assert.strictEqual(startActivity("demo", { nonsense: 1 }), "building demo:", "an invalid input still gives a line")
  })

  it("end: what the job did, or why it failed", () => {
    const sources = (n: number) => Array.from({ length: n }, (_, i) => ({ title: `s${i}`, url: `https://example.org/${i}` }))
    assert.strictEqual(finalActivity("research", { brief: "b", sources: sources(3) }), "done: 3 sources")
    assert.strictEqual(finalActivity("research", { brief: "b", sources: sources(1) }), "done: 1 source")
    assert.strictEqual(finalActivity("research", { brief: "b", sources: [] }), "done: no sources")
    assert.strictEqual(finalActivity("demo", { title: "Pendulum", html: "<p>x</p>", tested: true }), `done: demo "Pendulum"`)
    assert.strictEqual(finalActivity("visual", { svg: "<svg/>" }), "done: figure")
    assert.strictEqual(finalActivity("research", subagentFailure("research", inputs.research, "the model gave no brief")), "error: the model gave no brief")
    assert.strictEqual(finalActivity("demo", subagentFailure("demo", inputs.demo, "no browser")), "error: no browser")
    assert.strictEqual(finalActivity("visual", subagentFailure("visual", inputs.visual, "timed out after 5 ms")), "error: timed out after 5 ms")
  })
})

describe("the activity line in GET /api/jobs", () => {
  const fake = makeFakeProvider()
  const subagents = makeFakeSubagents()
  fake.answerWith(script(() => ({ content: "unused" })))

  layer(layerTestServer(fake.layer, {}, { subagents: subagents.layer }), { excludeTestServices: true })("with fake sub-agents", (it) => {
    const results: Record<JobKind, SubagentResult> = {
      research: { brief: "b", sources: [1, 2, 3].map((i) => ({ title: `s${i}`, url: `https://example.org/${i}` })) },
      demo: { title: "Pendulum", html: "<p>pendulum</p>", tested: true },
      visual: { svg: "<svg xmlns=\"http://www.w3.org/2000/svg\"/>" }
    }
    const expected: Record<JobKind, readonly [string, string]> = {
      research: [`researching: "sigma.js v3"`, "done: 3 sources"],
      demo: [`building demo: "Pendulum"`, `done: demo "Pendulum"`],
      visual: [`drawing: "A labelled pendulum."`, "done: figure"]
    }
    for (const kind of ["research", "demo", "visual"] as const) {
      it.effect(`${kind}: the start line from the dispatch, the tool lines while it runs, the done line at the end`, () =>
        Effect.gen(function*() {
          const report = yield* Deferred.make<void>()
          subagents.answerWith((job, gated) =>
            Deferred.await(report).pipe(Effect.andThen(job.reportActivity("tool_call: working")), Effect.andThen(gated))
          )
          const jobId = yield* dispatch(`act-${kind}`, kind)
          const started = yield* onlyJob(`act-${kind}`)
          assert.strictEqual(started.status, "running")
          assert.strictEqual(started.activity, expected[kind][0], "before the sub-agent said anything")
          yield* Deferred.succeed(report, undefined)
          yield* eventually(onlyJob(`act-${kind}`), (j) => j.activity === "tool_call: working", "the tool line")
          yield* subagents.finish(jobId, results[kind])
          const [done] = yield* settled(`act-${kind}`)
          assert.strictEqual(done!.status, "done")
          assert.strictEqual(done!.activity, expected[kind][1])
        }))
    }

    it.effect("a failure ends the line with error: and its reason", () =>
      Effect.gen(function*() {
        subagents.gated()
        const jobId = yield* dispatch("act-error", "visual")
        yield* subagents.finish(jobId, subagentFailure("visual", inputs.visual, "no usable SVG after 4 attempts"))
        const [done] = yield* settled("act-error")
        assert.strictEqual(done!.status, "error")
        assert.strictEqual(done!.activity, "error: no usable SVG after 4 attempts")
      }))
  })
})

describe("a sub-agent that answers without calling a tool", () => {
  const fake = makeFakeProvider()
  // Every sub-agent's model answers in plain text at once: no tool call, so no tool line ever.
  fake.answerWith(script(() => ({ content: "Sigma.js v3 renders graphs with WebGL." })))
  // An executable that is never launched (the builder writes no demo): the demo sub-agent needs one to start.
  const real = RealSubagents.layerTest(settings({ chromiumPath: "/bin/true" }))

  layer(layerTestServer(fake.layer, {}, { subagents: real }), { excludeTestServices: true })(
    "real sub-agents",
    (it) => {
      const expected: Record<JobKind, { readonly status: JobRecord["status"]; readonly activity: string }> = {
        // The plain answer is the brief; it names no page it read.
        research: { status: "done", activity: "done: no sources" },
        demo: { status: "error", activity: "error: the builder answered without writing a demo" },
        visual: { status: "error", activity: "error: the maker answered without drawing a figure" }
      }
      for (const kind of ["research", "demo", "visual"] as const) {
        it.effect(`${kind}: the line ends ${expected[kind].activity}`, () =>
          Effect.gen(function*() {
            yield* dispatch(`plain-${kind}`, kind)
            const [done] = yield* settled(`plain-${kind}`)
            assert.strictEqual(done!.status, expected[kind].status)
            assert.strictEqual(done!.activity, expected[kind].activity)
            assert.isTrue(
              fake.calls.some((c) => c.model === `${kind}-model` && (c.messages.at(-1)?.content ?? "") !== ""),
              "the sub-agent's model was asked"
            )
          }))
      }
    }
  )
})
