/**
 * The two `Planner` layers and the `ControlPlane` layer on the wire:
 * - `direct`: the server's openai-compatible adapter against a local fake
 *   provider — exactly one tool call asked for, tools as JSON Schema, the
 *   screenshot as an `image_url`, the answer resolved by the cloud's own
 *   `resolveDecision` (text or two calls are failures, never a decision);
 * - `cloud-proxy` and the control plane: the typed client against a fake
 *   Switchboard API — the host token on every request, the contract's bodies,
 *   204 as "nothing queued", error codes kept (retryable or not).
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { FakeAnthropic, FakeOpenAi } from "@switchboard/providers/testing"
import { ApiClient } from "@switchboard/client"
import * as CloudProxyPlanner from "../src/CloudProxyPlanner.ts"
import { ControlPlane, isFatal } from "../src/ControlPlane.ts"
import * as DirectPlanner from "../src/DirectPlanner.ts"
import { Planner } from "../src/Planner.ts"
import type { DecisionRequest } from "../src/Planner.ts"
import { startFakeServer } from "@switchboard/client/testing"
import type { Reply } from "@switchboard/client/testing"

const png = { mediaType: "image/png" as const, data: "iVBORw0KGgo=" }

const request: DecisionRequest = {
  taskId: "task_1",
  attempt: 2,
  systemPrompt: "You are the planner.",
  userPrompt: "Goal: test\n\nNo step has been taken yet.",
  tools: [
    { name: "finish", description: "done", parameters: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] } },
    { name: "read_file", description: "read", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }
  ],
  screenshot: png
}

const directPlanner = (env: Record<string, string>) =>
  DirectPlanner.fromEnvironment.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))))

describe("direct planner (the host's own provider, through the server's adapters)", () => {
  it.effect("asks for exactly one tool call with JSON Schema tools and the screenshot, and returns it", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped({ apiKey: "sk-host-own" })
      fake.enqueue(FakeOpenAi.reply.toolCalls([{ name: "read_file", arguments: "{\"path\":\"a.txt\"}" }]))
      const layer = yield* directPlanner({ LLM_PROVIDER: "openai-compatible", LLM_MODEL: "gpt-test", LLM_API_KEY: "sk-host-own", LLM_BASE_URL: fake.url })
      const decision = yield* Planner.use((p) => p.decide(request)).pipe(Effect.provide(layer))
      assert.deepStrictEqual(decision, { toolName: "read_file", arguments: { path: "a.txt" } })
      const body = fake.chatRequests()[0]?.body as any
      assert.strictEqual(body.model, "gpt-test")
      assert.strictEqual(body.tool_choice, "required")
      assert.strictEqual(body.parallel_tool_calls, false)
      assert.deepStrictEqual(body.tools.map((t: any) => t.function.parameters), request.tools.map((t) => t.parameters))
      assert.deepStrictEqual(body.messages[0], { role: "system", content: "You are the planner." })
      const user = body.messages.at(-1)
      assert.strictEqual(user.role, "user")
      assert.deepStrictEqual(user.content.at(-1), { type: "image_url", image_url: { url: `data:image/png;base64,${png.data}` } })
    }))

  it.effect("an answer without exactly one usable call is a retryable failure, never a decision", () =>
    Effect.gen(function*() {
      const fake = yield* FakeOpenAi.scoped()
      fake.enqueue(
        FakeOpenAi.reply.text("I would read a file"),
        FakeOpenAi.reply.toolCalls([{ name: "finish", arguments: "{\"summary\":\"a\"}" }, { name: "finish", arguments: "{\"summary\":\"b\"}" }]),
        FakeOpenAi.reply.toolCalls([{ name: "rm_rf", arguments: "{}" }]),
        FakeOpenAi.reply.status(500)
      )
      const layer = yield* directPlanner({ LLM_PROVIDER: "openai-compatible", LLM_MODEL: "m", LLM_API_KEY: "k", LLM_BASE_URL: fake.url })
      const codes: Array<[string | undefined, boolean]> = []
      for (let i = 0; i < 4; i++) {
        const error = yield* Planner.use((p) => p.decide(request)).pipe(Effect.provide(layer), Effect.flip)
        codes.push([error.code, error.retryable])
      }
      assert.deepStrictEqual(codes, [
        ["no_tool_call", true],
        ["multiple_tool_calls", true],
        ["invalid_tool_call", true],
        ["provider_error", true]
      ])
    }))

  it.effect("anthropic: one tool use required (tool_choice any, no parallel use), the screenshot as an image block", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped({ apiKey: "sk-ant-host" })
      fake.enqueue(FakeAnthropic.reply.toolUse([{ name: "finish", input: { summary: "done" } }]))
      const layer = yield* directPlanner({ LLM_PROVIDER: "anthropic", LLM_MODEL: "claude-test", LLM_API_KEY: "sk-ant-host", LLM_BASE_URL: fake.url })
      const decision = yield* Planner.use((p) => p.decide(request)).pipe(Effect.provide(layer))
      assert.deepStrictEqual(decision, { toolName: "finish", arguments: { summary: "done" } })
      const body = fake.messageRequests()[0]?.body as any
      assert.deepStrictEqual(body.tool_choice, { type: "any", disable_parallel_tool_use: true })
      assert.deepStrictEqual(body.tools.map((t: any) => t.input_schema), request.tools.map((t) => t.parameters))
      assert.deepStrictEqual(body.messages.at(-1).content.at(-1), {
        type: "image",
        source: { type: "base64", media_type: "image/png", data: png.data }
      })
    }))

  it.effect("without provider settings, it says which variables are missing", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(directPlanner({ LLM_PROVIDER: "openai-compatible", LLM_MODEL: "m" }))
      assert.include(error, "LLM_API_KEY")
    }))
})

const api = (handler: (path: string, body: any) => Reply) =>
  Effect.gen(function*() {
    const server = yield* startFakeServer((r) => handler(r.path, r.body.length === 0 ? undefined : JSON.parse(r.body.toString("utf8"))))
    const client = ApiClient.layer({ baseUrl: server.url, token: "host-token-1" })
    return { server, client }
  })

describe("cloud-proxy planner and control plane (typed client, host token)", () => {
  it.effect("a decision is one POST /internal/planner/decision with the host token; failures keep their code", () =>
    Effect.gen(function*() {
      const replies: Array<Reply> = [
        { json: { toolName: "finish", arguments: { summary: "ok" }, stepIndex: 4 } },
        { status: 502, json: { error: "The provider answered without a tool call", code: "no_tool_call" } },
        { status: 409, json: { error: "lease expired", code: "lease_lost", taskId: "task_1" } },
        { status: 429, json: { error: "Host host_a used 12 of its 10 planner tokens", code: "budget_exceeded", limit: 10, used: 12, retryAfter: 3600 } },
        { status: 429, json: { error: "Too many decisions", code: "rate_limited", retryAfter: 7 } },
        {
          status: 503,
          json: { error: "Too many planner decisions in flight on this replica", code: "overloaded", retryAfter: 3 },
          headers: { "retry-after": "3" }
        },
        { status: 503, json: { error: "Too many planner decisions in flight on this replica", code: "overloaded" }, headers: { "retry-after": "5" } },
        { status: 409, json: { error: "Task task_1: this attempt has taken 500 decisions", code: "step_limit", taskId: "task_1", limit: 500 } }
      ]
      const { client, server } = yield* api(() => replies.shift()!)
      const planner = CloudProxyPlanner.layerNoDeps("host_a").pipe(Layer.provide(client))
      const decide = Planner.use((p) => p.decide(request)).pipe(Effect.provide(planner))
      assert.deepStrictEqual(yield* decide, { toolName: "finish", arguments: { summary: "ok" }, stepIndex: 4 })
      const sent = server.requests[0]!
      assert.strictEqual(sent.path, "/internal/planner/decision")
      assert.strictEqual(sent.headers.authorization, "Bearer host-token-1")
      assert.deepStrictEqual(JSON.parse(sent.body.toString("utf8")), { hostId: "host_a", ...request })
      const noCall = yield* Effect.flip(decide)
      assert.deepStrictEqual([noCall.code, noCall.status, noCall.retryable], ["no_tool_call", 502, true])
      const lost = yield* Effect.flip(decide)
      assert.deepStrictEqual([lost.code, lost.retryable], ["lease_lost", false])
      // Out of budget: the task fails with that reason, no retry (it would be refused until the window moves).
      const broke = yield* Effect.flip(decide)
      assert.deepStrictEqual([broke.code, broke.status, broke.retryable], ["budget_exceeded", 429, false])
      assert.include(broke.message, "planner tokens")
      // Over PLANNER_HOST_RPM: asked again, after the server's wait.
      const limited = yield* Effect.flip(decide)
      assert.deepStrictEqual([limited.code, limited.retryable, limited.retryAfterMs], ["rate_limited", true, 7000])
      // A replica at PLANNER_MAX_CONCURRENT_DECISIONS: busy, asked again after its wait (the header's when the body lacks it).
      const busy = yield* Effect.flip(decide)
      assert.deepStrictEqual([busy.code, busy.status, busy.retryable, busy.retryAfterMs], ["overloaded", 503, true, 3000])
      assert.strictEqual(busy.message, "Switchboard is busy (too many turns at once); retry in 3 s")
      const busyHeader = yield* Effect.flip(decide)
      assert.deepStrictEqual([busyHeader.code, busyHeader.retryable, busyHeader.retryAfterMs], ["overloaded", true, 5000])
      // Past PLANNER_MAX_STEPS: no retry (the attempt takes no more decisions), the task fails saying so.
      const spent = yield* Effect.flip(decide)
      assert.deepStrictEqual([spent.code, spent.status, spent.retryable], ["step_limit", 409, false])
      assert.include(spent.message, "500 decisions")
    }))

  it.effect("an unreachable server is a retryable failure", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(() => FakeOpenAi.closedPort())
      const planner = CloudProxyPlanner.layerNoDeps("host_a").pipe(
        Layer.provide(ApiClient.layer({ baseUrl: `http://127.0.0.1:${port}`, token: "t" }))
      )
      const error = yield* Planner.use((p) => p.decide(request)).pipe(Effect.provide(planner), Effect.flip)
      assert.isTrue(error.retryable)
      assert.include(error.message, "cannot reach the server")
    }))

  it.effect("heartbeat, claim (204 and 200), lease, result: paths, bodies, token, codes", () =>
    Effect.gen(function*() {
      const task = { taskId: "task_9", attempt: 1, goal: "g", leaseExpiresAt: "2030-01-01T00:00:00.000Z" }
      const replies: Array<Reply> = [
        { json: { serverTime: "2030-01-01T00:00:00.000Z" } },
        { status: 204 },
        { json: { task } },
        { json: { leaseExpiresAt: "2030-01-01T00:01:00.000Z" } },
        { status: 409, json: { error: "lease expired", code: "lease_lost", taskId: "task_9" } },
        { json: { taskId: "task_9", status: "failed", attempt: 1, hostId: "host_a", goal: "g", createdAt: "2030-01-01T00:00:00.000Z" } },
        { status: 401, json: { error: "unknown host token", code: "unauthenticated" } }
      ]
      const { client, server } = yield* api(() => replies.shift()!)
      const cp = yield* ControlPlane.pipe(Effect.provide(ControlPlane.layerNoDeps("host_a").pipe(Layer.provide(client))))
      assert.strictEqual(yield* cp.heartbeat, "2030-01-01T00:00:00.000Z")
      assert.isUndefined(yield* cp.claim)
      assert.deepStrictEqual(yield* cp.claim, task)
      assert.strictEqual(yield* cp.renewLease(task), "2030-01-01T00:01:00.000Z")
      const lost = yield* Effect.flip(cp.renewLease(task))
      assert.strictEqual(lost.code, "lease_lost")
      yield* cp.reportResult(task, { status: "failed", output: "host shutting down" })
      const refused = yield* Effect.flip(cp.heartbeat)
      assert.isTrue(isFatal(refused))
      assert.deepStrictEqual(server.requests.map((r) => `${r.method} ${r.path}`), [
        "POST /internal/hosts/host_a/heartbeat",
        "POST /internal/hosts/host_a/claim",
        "POST /internal/hosts/host_a/claim",
        "POST /internal/tasks/task_9/lease",
        "POST /internal/tasks/task_9/lease",
        "POST /internal/tasks/task_9/result",
        "POST /internal/hosts/host_a/heartbeat"
      ])
      assert.isTrue(server.requests.every((r) => r.headers.authorization === "Bearer host-token-1"))
      assert.deepStrictEqual(JSON.parse(server.requests[3]!.body.toString("utf8")), { hostId: "host_a", attempt: 1 })
      assert.deepStrictEqual(JSON.parse(server.requests[5]!.body.toString("utf8")), {
        hostId: "host_a",
        attempt: 1,
        status: "failed",
        output: "host shutting down"
      })
    }))
})
