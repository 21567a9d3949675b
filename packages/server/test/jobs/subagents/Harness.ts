/**
 * Running one sub-agent job in a test: the real `SubagentsLive` layer over the
 * real openai-compatible adapter, talking HTTP to a `FakeOpenAi` the test
 * scripts call by call. What the job reported as activity is recorded.
 */
import { Effect, Layer, Redacted } from "effect"
import type { JobInput, JobKind, SubagentResult } from "@switchboard/domain"
import { OpenAiCompatible } from "@switchboard/providers"
import { Subagents } from "../../../src/jobs/Subagents.ts"
import { DEFAULT_CHROMIUM_PATH } from "../../../src/jobs/subagents/SubagentConfig.ts"
import type { SubagentSettings } from "../../../src/jobs/subagents/SubagentConfig.ts"
import * as RealSubagents from "../../../src/jobs/subagents/RealSubagents.ts"
import type { SubagentOverrides } from "../../../src/jobs/subagents/RealSubagents.ts"
import type { FakeOpenAi } from "@switchboard/providers/testing"

export const settings = (overrides: Partial<SubagentSettings> = {}): SubagentSettings => ({
  models: { research: "research-model", demo: "demo-model", visual: "visual-model" },
  searchUrl: undefined,
  // The tests' pages are on 127.0.0.1: only the tests about the address policy turn this off.
  fetchAllowPrivate: true,
  chromiumPath: DEFAULT_CHROMIUM_PATH,
  visualVision: true,
  ...overrides
})

export const providerFor = (fake: FakeOpenAi.FakeOpenAi) =>
  OpenAiCompatible.layer({
    model: "default-model",
    baseUrl: fake.url,
    apiKey: Redacted.make("sk-test-subagents"),
    timeoutMs: 10_000,
    transport: "undici",
    transcriptionModel: "whisper-1"
  })

/** The sub-agents layer over the fake provider. */
export const subagentsFor = (fake: FakeOpenAi.FakeOpenAi, config: SubagentSettings, overrides: SubagentOverrides = {}) =>
  RealSubagents.layerTest(config, overrides).pipe(Layer.provide(providerFor(fake)))

export interface RunOutcome<R extends SubagentResult> {
  readonly result: R
  readonly activity: ReadonlyArray<string>
}

/** Runs one job on whichever `Subagents` is in context. */
export const runJob = <R extends SubagentResult>(kind: JobKind, input: JobInput) =>
  Effect.gen(function*() {
    const activity: Array<string> = []
    const subagents = yield* Subagents
    const result = yield* subagents.run({
      jobId: `job_${kind}_test`,
      kind,
      input,
      reportActivity: (line) => Effect.sync(() => void activity.push(line))
    })
    return { result: result as R, activity } satisfies RunOutcome<R>
  })

/** The parsed `messages` of a recorded Chat Completions request. */
export const wireMessages = (fake: FakeOpenAi.FakeOpenAi, index: number): ReadonlyArray<Record<string, unknown>> =>
  ((fake.chatRequests()[index]?.body as { messages?: unknown } | undefined)?.messages ?? []) as ReadonlyArray<
    Record<string, unknown>
  >

/** The tool names a recorded request offered. */
export const offeredTools = (fake: FakeOpenAi.FakeOpenAi, index: number): ReadonlyArray<string> =>
  (((fake.chatRequests()[index]?.body as { tools?: unknown } | undefined)?.tools ?? []) as ReadonlyArray<
    { function: { name: string } }
  >).map((t) => t.function.name)

/** The tool results (parsed JSON content) a recorded request carried, in order. */
export const toolResults = (fake: FakeOpenAi.FakeOpenAi, index: number): ReadonlyArray<Record<string, unknown>> =>
  wireMessages(fake, index)
    .filter((m) => m["role"] === "tool")
    .map((m) => JSON.parse(String(m["content"])) as Record<string, unknown>)

export const call = (name: string, args: Record<string, unknown>, id?: string) => ({
  ...(id !== undefined ? { id } : {}),
  name,
  arguments: JSON.stringify(args)
})
