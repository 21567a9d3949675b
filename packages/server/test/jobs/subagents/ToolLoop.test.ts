/**
 * The shared sub-agent tool loop, over an in-memory provider whose answers
 * the test sets: tool errors fed back, activity per call, the round cap,
 * images after a tool result. And `modelFor(role)` / the sub-agent settings
 * from configuration.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Exit, Layer, Schema } from "effect"
import type { ProviderChatParams, ProviderChatResponse } from "@switchboard/domain"
import { Subagents } from "../../../src/jobs/Subagents.ts"
import { modelFor, readSubagentSettings } from "../../../src/jobs/subagents/SubagentConfig.ts"
import * as RealSubagents from "../../../src/jobs/subagents/RealSubagents.ts"
import { activityLine, runToolLoop, tool, ToolFailure } from "../../../src/jobs/subagents/ToolLoop.ts"
import type { ToolLoopOptions } from "../../../src/jobs/subagents/ToolLoop.ts"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { settings } from "./Harness.ts"

const echo = tool({
  name: "echo",
  description: "",
  args: Schema.Struct({ text: Schema.String }),
  activity: ({ text }) => `echo: ${text}`,
  execute: ({ text }) =>
    text === "fail"
      ? Effect.fail(new ToolFailure({ message: "echo refuses to fail" }))
      : Effect.succeed({ result: { echoed: text }, ...(text === "done" ? { finish: true } : {}) })
})

const picture = tool({
  name: "picture",
  description: "",
  args: Schema.Struct({}),
  activity: () => "picture",
  execute: () => Effect.succeed({ result: "drawn", images: [{ mediaType: "image/png" as const, data: "iVBOR" }] })
})

const scripted = (answers: ReadonlyArray<ProviderChatResponse>) => {
  const fake = makeFakeProvider()
  let next = 0
  fake.answerWith(() => Effect.succeed(answers[Math.min(next++, answers.length - 1)]!))
  return fake
}

const calls = (...list: Array<[string, Record<string, unknown>] | [string, Record<string, unknown>, string]>) => ({
  content: "",
  toolCalls: list.map(([name, args, invalidArgs], i) => ({
    id: `c${i}`,
    name,
    args,
    ...(invalidArgs !== undefined ? { invalidArgs } : {})
  }))
})

const run = (fake: ReturnType<typeof makeFakeProvider>, options: Partial<ToolLoopOptions> = {}) =>
  Effect.gen(function*() {
    const activity: Array<string> = []
    const outcome = yield* runToolLoop({
      systemPrompt: "be a test",
      task: "do the thing",
      tools: [echo, picture],
      model: "sub-model",
      maxRounds: 5,
      reportActivity: (line) => Effect.sync(() => void activity.push(line)),
      ...options
    }).pipe(Effect.provide(fake.layer))
    return { outcome, activity }
  })

const toolErrors = (params: ProviderChatParams | undefined) =>
  (params?.messages ?? []).flatMap((m) => m.toolResult?.error !== undefined ? [m.toolResult.error] : [])

describe("sub-agent tool loop", () => {
  it.effect("unknown tools, bad arguments and tool failures go back to the model as errors; the loop goes on", () =>
    Effect.gen(function*() {
      const fake = scripted([
        calls(["nope", {}], ["echo", { text: 5 }], ["echo", {}, "arguments are not valid JSON"], ["echo", { text: "fail" }]),
        { content: "gave up politely" }
      ])
      const { activity, outcome } = yield* run(fake)

      assert.deepStrictEqual(outcome, { _tag: "Answered", content: "gave up politely", rounds: 2 })
      const errors = toolErrors(fake.calls[1])
      assert.strictEqual(errors[0], "unknown tool nope; the tools are: echo, picture")
      assert.match(errors[1]!, /^invalid arguments: Expected string/)
      assert.strictEqual(errors[2], "invalid arguments: arguments are not valid JSON")
      assert.strictEqual(errors[3], "echo refuses to fail")
      assert.deepStrictEqual(activity, ["echo: fail"], "only calls that run report activity")
    }))

  it.effect("an isolated context: its own system prompt, task, tools and model on every call", () =>
    Effect.gen(function*() {
      const fake = scripted([calls(["echo", { text: "hi" }]), { content: "ok" }])
      yield* run(fake)
      const [first, second] = fake.calls
      assert.strictEqual(first?.systemPrompt, "be a test")
      assert.deepStrictEqual(first?.messages.map((m) => [m.role, m.content]), [["user", "do the thing"]])
      assert.deepStrictEqual(first?.toolSchemas.map((t) => t.name), ["echo", "picture"])
      assert.strictEqual(first?.model, "sub-model")
      assert.deepStrictEqual(second?.messages.map((m) => m.role), ["user", "assistant", "tool"])
      assert.deepStrictEqual(second?.messages[2]?.toolResult?.result, { echoed: "hi" })
    }))

  it.effect("a finishing tool ends the loop; the rest of its round is not run", () =>
    Effect.gen(function*() {
      const fake = scripted([calls(["echo", { text: "done" }], ["echo", { text: "after" }])])
      const { activity, outcome } = yield* run(fake)
      assert.deepStrictEqual(outcome, { _tag: "Finished", content: "", rounds: 1 })
      assert.deepStrictEqual(activity, ["echo: done"])
    }))

  it.effect("the round cap stops a model that never ends", () =>
    Effect.gen(function*() {
      const fake = scripted([calls(["echo", { text: "again" }])])
      const { outcome } = yield* run(fake, { maxRounds: 3 })
      assert.deepStrictEqual(outcome, { _tag: "RoundCap", content: "", rounds: 3 })
      assert.strictEqual(fake.calls.length, 3)
    }))

  it.effect("a tool's images are shown with the next call only, after a user message", () =>
    Effect.gen(function*() {
      const fake = scripted([calls(["picture", {}]), calls(["echo", { text: "x" }]), { content: "seen" }])
      yield* run(fake)
      assert.isUndefined(fake.calls[0]?.images)
      assert.deepStrictEqual(fake.calls[1]?.images, [{ mediaType: "image/png", data: "iVBOR" }])
      assert.strictEqual(fake.calls[1]?.messages.at(-1)?.role, "user")
      assert.isUndefined(fake.calls[2]?.images)
    }))

  it("activity lines are one bounded line", () => {
    assert.strictEqual(activityLine("web_search:\n  \"a\tb\""), `web_search: "a b"`)
    assert.strictEqual(activityLine("x".repeat(200)).length, 120)
  })
})

describe("sub-agent settings", () => {
  const withEnv = (env: Record<string, string>) => Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))

  it.effect("modelFor(role): JOB_MODEL_<KIND>, else LLM_MODEL, blank counting as unset", () =>
    Effect.gen(function*() {
      const env = { LLM_MODEL: "base", JOB_MODEL_RESEARCH: "researcher", JOB_MODEL_DEMO: "  " }
      assert.strictEqual(yield* modelFor("research").pipe(withEnv(env)), "researcher")
      assert.strictEqual(yield* modelFor("demo").pipe(withEnv(env)), "base")
      assert.strictEqual(yield* modelFor("visual").pipe(withEnv(env)), "base")
      assert.isUndefined(yield* modelFor("visual").pipe(withEnv({})))
    }))

  it.effect("defaults: no search, private addresses refused, Debian's chromium, vision on", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* readSubagentSettings.pipe(withEnv({ LLM_MODEL: "m" })), {
        models: { research: "m", demo: "m", visual: "m" },
        searchUrl: undefined,
        fetchAllowPrivate: false,
        chromiumPath: "/usr/bin/chromium",
        visualVision: true
      })
      const set = yield* readSubagentSettings.pipe(withEnv({
        SEARCH_URL: "http://127.0.0.1:8888",
        FETCH_ALLOW_PRIVATE: "1",
        CHROMIUM_PATH: "/opt/chromium",
        JOB_VISUAL_VISION: "0"
      }))
      assert.deepStrictEqual(
        [set.searchUrl, set.fetchAllowPrivate, set.chromiumPath, set.visualVision],
        ["http://127.0.0.1:8888", true, "/opt/chromium", false]
      )
    }))
})

describe("SubagentsLive", () => {
  const runVisual = (fake: ReturnType<typeof makeFakeProvider>) =>
    Subagents.use((s) => s.run({ jobId: "j1", kind: "visual", input: { brief: "b" }, reportActivity: () => Effect.void })).pipe(
      Effect.provide(RealSubagents.layerTest(settings()).pipe(Layer.provide(fake.layer)))
    )

  it.effect("a sub-agent that dies still gives the runner a result: the failure shape", () =>
    Effect.gen(function*() {
      const fake = makeFakeProvider()
      fake.answerWith(() => Effect.die(new Error("bug in an adapter")))
      assert.deepStrictEqual(yield* runVisual(fake), { svg: "", notes: "the sub-agent crashed (see the server log)" })
    }))

  it.effect("an interruption (the runner's JOB_TIMEOUT_MS) stays an interruption, not a result", () =>
    Effect.gen(function*() {
      const fake = makeFakeProvider()
      fake.answerWith(() => Effect.interrupt)
      const exit = yield* Effect.exit(runVisual(fake))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause))
    }))
})
