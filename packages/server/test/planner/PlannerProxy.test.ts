/**
 * The planner proxy end to end over HTTP (docs/planner.md), against
 * a local OpenAI-compatible server and a local Anthropic-compatible server:
 * each scenario of the spec is a test named after its title.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { client, databaseText, decisionBody, layerPlannerServer } from "../support/ControlPlane.ts"
import type { Client } from "../support/ControlPlane.ts"
import { closedPort, FakeAnthropic, FakeOpenAi } from "@switchboard/providers/testing"
import { baseUrl, request } from "../support/TestServer.ts"

const OPENAI_KEY = "sk-profile-openai-4f9a1c7e2b"
const ANTHROPIC_KEY = "sk-ant-profile-8d2e6b0a9c"

let names = 0
const uniqueName = (base: string) => `${base}-${++names}`

const api = Effect.map(baseUrl, (base) => client(base))

/** A registered host holding a freshly claimed task. */
const claimedTask = (c: Client) =>
  Effect.gen(function*() {
    const host = yield* c.addHost()
    yield* c.addTask("open the settings", host.hostId)
    const task = yield* c.claim(host)
    return { host, task }
  })

/** A profile pointing at a fake, made the active one. */
const activeProfile = (c: Client, profile: Record<string, unknown>) =>
  Effect.gen(function*() {
    const profileId = yield* c.addProfile({ name: uniqueName(String(profile["provider"])), timeoutMs: 5_000, ...profile })
    yield* c.activate(profileId)
    return profileId
  })

const openAiProfile = (fake: FakeOpenAi.FakeOpenAi, extra: Record<string, unknown> = {}) => ({
  provider: "openai-compatible",
  model: "gpt-planner",
  baseUrl: fake.url,
  apiKey: OPENAI_KEY,
  ...extra
})

const anthropicProfile = (fake: FakeAnthropic.FakeAnthropic, extra: Record<string, unknown> = {}) => ({
  provider: "anthropic",
  model: "claude-planner",
  baseUrl: fake.url,
  apiKey: ANTHROPIC_KEY,
  ...extra
})

/** The OpenAI fake, emptied, behind the active profile; a host holding a fresh task. */
const openAiReady = Effect.gen(function*() {
  const c = yield* api
  const openai = yield* FakeOpenAi.FakeOpenAiServer
  openai.reset()
  yield* activeProfile(c, openAiProfile(openai))
  const { host, task } = yield* claimedTask(c)
  return { c, openai, host, task }
})

const decisionsOf = (c: Client, taskId: string) =>
  Effect.map(c.admin.get(`/admin/planner-decisions?taskId=${taskId}`), (r) => r.json.decisions as Array<Record<string, unknown>>)

const fakes = Layer.mergeAll(FakeOpenAi.FakeOpenAiServer.layer(), FakeAnthropic.FakeAnthropicServer.layer())

describe("cloud planner proxy", () => {
  layer(Layer.mergeAll(layerPlannerServer(), fakes), { excludeTestServices: true })("over HTTP", (it) => {
    it.effect("no active profile: 503 no_active_profile, no provider call", () =>
      Effect.gen(function*() {
        const c = yield* api
        const openai = yield* FakeOpenAi.FakeOpenAiServer
        const { host, task } = yield* claimedTask(c)
        const res = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(res.status, 503)
        assert.strictEqual(res.json.code, "no_active_profile")
        assert.strictEqual(openai.chatRequests().length, 0)
      }))

    it.effect("Authenticated host requests a planner decision", () =>
      Effect.gen(function*() {
        const { c, host, openai, task } = yield* openAiReady
        openai.enqueue(FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":10,\"y\":20}" }]))

        const res = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(res.status, 200, res.text)
        assert.deepStrictEqual(res.json, { toolName: "click", arguments: { x: 10, y: 20 }, stepIndex: 0 })

        assert.strictEqual(openai.chatRequests().length, 1, "one provider call")
        const [sent] = openai.chatRequests()
        assert.strictEqual(sent?.headers.authorization, `Bearer ${OPENAI_KEY}`, "the profile's key")
        const body = sent?.body as any
        assert.strictEqual(body.model, "gpt-planner")
        assert.strictEqual(body.tool_choice, "required")
        assert.strictEqual(body.parallel_tool_calls, false)
        assert.deepStrictEqual(body.messages, [
          { role: "system", content: "You operate a desktop. Choose one tool per step." },
          { role: "user", content: "Step 1: open the settings." }
        ])
        assert.deepStrictEqual(body.tools[0], {
          type: "function",
          function: {
            name: "click",
            description: "Click at a point of the screen",
            parameters: { type: "object", properties: { x: { type: "number" }, y: { type: "number" } }, required: ["x", "y"] }
          }
        })
      }))

    it.effect("Unauthenticated or foreign-host request is rejected", () =>
      Effect.gen(function*() {
        const c = yield* api
        const openai = yield* FakeOpenAi.FakeOpenAiServer
        yield* activeProfile(c, openAiProfile(openai))
        const { host, task } = yield* claimedTask(c)
        const other = yield* c.addHost("other")
        openai.reset()
        openai.respondWith(() => FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":1,\"y\":1}" }]))

        const missing = yield* request("/internal/planner/decision", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(decisionBody(host, task))
        })
        assert.strictEqual(missing.status, 401)
        assert.strictEqual(missing.json.code, "unauthenticated")
        const unknown = yield* c.decision("sbh_not-a-token", decisionBody(host, task))
        assert.strictEqual(unknown.status, 401)
        const foreignToken = yield* c.decision(other.token, decisionBody(host, task))
        assert.strictEqual(foreignToken.status, 403, "another host's token naming this host")
        assert.strictEqual(foreignToken.json.code, "forbidden")
        const foreignTask = yield* c.decision(other.token, decisionBody(other, task))
        assert.strictEqual(foreignTask.status, 403, "a task not assigned to the requesting host")
        const invalid = yield* c.decision(host.token, decisionBody(host, task, { tools: [] }))
        assert.strictEqual(invalid.status, 400, "a request without tools")
        assert.strictEqual(invalid.json.code, "invalid_request")
        assert.strictEqual(openai.chatRequests().length, 0, "no provider was called")
        assert.deepStrictEqual(yield* decisionsOf(c, task.taskId), [])
      }))

    it.effect("Provider returns a usable decision", () =>
      Effect.gen(function*() {
        const c = yield* api
        const anthropic = yield* FakeAnthropic.FakeAnthropicServer
        anthropic.reset()
        yield* activeProfile(c, anthropicProfile(anthropic))
        const { host, task } = yield* claimedTask(c)
        anthropic.enqueue(FakeAnthropic.reply.toolUse([{ name: "finish", input: { summary: "settings open" } }], "Done."))

        const res = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(res.status, 200, res.text)
        assert.deepStrictEqual(res.json, { toolName: "finish", arguments: { summary: "settings open" }, stepIndex: 0 })
        const [sent] = anthropic.messageRequests()
        assert.strictEqual(sent?.headers["x-api-key"], ANTHROPIC_KEY)
        const body = sent?.body as any
        assert.strictEqual(body.model, "claude-planner")
        assert.deepStrictEqual(body.tool_choice, { type: "any", disable_parallel_tool_use: true })
        assert.strictEqual(body.system, "You operate a desktop. Choose one tool per step.")
        assert.deepStrictEqual(body.tools[1].input_schema, decisionBody(host, task).tools[1]!.parameters)
      }))

    it.effect("Configured provider is unreachable or misconfigured", () =>
      Effect.gen(function*() {
        const c = yield* api
        const guarded = yield* FakeOpenAi.scoped({ apiKey: "sk-the-right-key" })
        const { host, task } = yield* claimedTask(c)

        // Invalid credentials: the provider answers 401 (and echoes the key it got).
        yield* activeProfile(c, openAiProfile(guarded, { apiKey: OPENAI_KEY }))
        const badKey = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(badKey.status, 502)
        assert.strictEqual(badKey.json.code, "provider_error")
        assert.include(badKey.json.error, "401")
        assert.strictEqual(badKey.json.reason, "status_401")
        assert.notInclude(badKey.text, OPENAI_KEY)
        assert.notInclude(badKey.text, "Incorrect API key")

        // A provider error: answered as it is, with no retry (retrying is the host agent's business).
        yield* activeProfile(c, openAiProfile(guarded, { apiKey: "sk-the-right-key" }))
        guarded.enqueue(FakeOpenAi.reply.status(500, "upstream exploded"))
        const before = guarded.chatRequests().length
        const failed = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(failed.status, 502)
        assert.strictEqual(failed.json.code, "provider_error")
        assert.strictEqual(failed.json.reason, "status_500")
        assert.notInclude(failed.text, "upstream exploded")
        assert.strictEqual(guarded.chatRequests().length, before + 1, "one provider call, not retried")

        // Unreachable.
        yield* activeProfile(c, openAiProfile(guarded, { baseUrl: `http://127.0.0.1:${yield* Effect.promise(closedPort)}/v1` }))
        const unreachable = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(unreachable.status, 502)
        assert.strictEqual(unreachable.json.code, "provider_error")
        assert.strictEqual(unreachable.json.reason, "connection_refused")

        // No answer within the profile's timeout.
        yield* activeProfile(c, openAiProfile(guarded, { apiKey: "sk-the-right-key", timeoutMs: 200 }))
        guarded.enqueue(FakeOpenAi.reply.hang())
        const timedOut = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(timedOut.status, 504)
        assert.strictEqual(timedOut.json.code, "provider_timeout")
        yield* Effect.promise(() => guarded.waitFor((rs) => rs.at(-1)?.aborted === true))

        // None of it fabricated a decision, persisted anything or hurt the process.
        assert.deepStrictEqual(yield* decisionsOf(c, task.taskId), [])
        assert.strictEqual((yield* request("/healthz")).status, 200)
        guarded.enqueue(FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":1,\"y\":2}" }]))
        const recovered = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(recovered.status, 200)
        assert.strictEqual(recovered.json.stepIndex, 0, "failures consumed no step index")
      }).pipe(Effect.scoped))

    it.effect("Host supplies a different timeout", () =>
      Effect.gen(function*() {
        const c = yield* api
        const openai = yield* FakeOpenAi.FakeOpenAiServer
        openai.reset()
        const { host, task } = yield* claimedTask(c)

        // The host asks for 50 ms; the profile allows 5 s; the provider takes 300 ms: the profile wins.
        yield* activeProfile(c, openAiProfile(openai, { timeoutMs: 5_000 }))
        openai.enqueue(FakeOpenAi.reply.json((FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":0,\"y\":0}" }]) as any).body, 200, 300))
        const slow = yield* c.decision(host.token, decisionBody(host, task, { timeoutMs: 50 }))
        assert.strictEqual(slow.status, 200, slow.text)

        // The host allows a minute; the profile allows 200 ms: 504 after the profile's timeout.
        yield* activeProfile(c, openAiProfile(openai, { timeoutMs: 200 }))
        openai.enqueue(FakeOpenAi.reply.hang())
        const capped = yield* c.decision(host.token, decisionBody(host, task, { timeoutMs: 60_000 }))
        assert.strictEqual(capped.status, 504)
        assert.include(capped.json.error, "200 ms")
      }))

    it.effect("Host configured for cloud-proxy transport has no local provider key", () =>
      Effect.gen(function*() {
        const { c, host, openai, task } = yield* openAiReady
        openai.enqueue(FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":3,\"y\":4}" }]))
        // The host holds no provider key; whatever provider settings it sends are not used.
        const res = yield* c.decision(host.token, decisionBody(host, task, {
          apiKey: "sk-host-local-key",
          model: "host-model",
          provider: "anthropic",
          baseUrl: "http://127.0.0.1:1/v1"
        }))
        assert.strictEqual(res.status, 200, res.text)
        const [sent] = openai.chatRequests()
        assert.strictEqual(sent?.headers.authorization, `Bearer ${OPENAI_KEY}`)
        assert.strictEqual((sent?.body as any).model, "gpt-planner")
        assert.notInclude(sent!.rawBody.toString("utf8"), "sk-host-local-key")
      }))

    it.effect("A planner-decision request resolves successfully", () =>
      Effect.gen(function*() {
        const c = yield* api
        const openai = yield* FakeOpenAi.FakeOpenAiServer
        yield* activeProfile(c, openAiProfile(openai))
        const { host, task } = yield* claimedTask(c)
        openai.enqueue(
          FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":5,\"y\":6}" }]),
          FakeOpenAi.reply.toolCalls([{ name: "finish", arguments: "{\"summary\":\"ok\"}" }])
        )
        const first = yield* c.decision(host.token, decisionBody(host, task))
        const second = yield* c.decision(host.token, decisionBody(host, task, { userPrompt: "Step 2: clicked; now?" }))
        assert.deepStrictEqual([first.json.stepIndex, second.json.stepIndex], [0, 1])

        const decisions = yield* decisionsOf(c, task.taskId)
        assert.strictEqual(decisions.length, 2)
        assert.deepInclude(decisions[0], {
          taskId: task.taskId,
          attempt: 1,
          stepIndex: 0,
          systemPrompt: "You operate a desktop. Choose one tool per step.",
          userPrompt: "Step 1: open the settings.",
          toolName: "click",
          arguments: { x: 5, y: 6 }
        })
        assert.deepInclude(decisions[1], { stepIndex: 1, userPrompt: "Step 2: clicked; now?", toolName: "finish", arguments: { summary: "ok" } })
        assert.isString(decisions[0]!["createdAt"])
        const one = yield* c.admin.get(`/admin/planner-decisions?taskId=${task.taskId}&attempt=2`)
        assert.deepStrictEqual(one.json.decisions, [], "filtered by attempt")
      }))

    it.effect("A planner-decision request fails", () =>
      Effect.gen(function*() {
        const c = yield* api
        const openai = yield* FakeOpenAi.FakeOpenAiServer
        yield* activeProfile(c, openAiProfile(openai))
        const { host, task } = yield* claimedTask(c)
        openai.enqueue(FakeOpenAi.reply.status(503, "overloaded"), FakeOpenAi.reply.text("I think you should click"))
        const failed = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(failed.status, 502)
        const unusable = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(unusable.status, 502)
        assert.deepStrictEqual(yield* decisionsOf(c, task.taskId), [], "no planner-decision row")
      }))

    it.effect("A screenshot was included in the request", () =>
      Effect.gen(function*() {
        const c = yield* api
        const openai = yield* FakeOpenAi.FakeOpenAiServer
        const anthropic = yield* FakeAnthropic.FakeAnthropicServer
        const { host, task } = yield* claimedTask(c)
        const png = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.from(`screenshot-${Date.now()}-unique-bytes`)])
          .toString("base64")
        const screenshot = { mediaType: "image/png", data: png }

        openai.reset()
        yield* activeProfile(c, openAiProfile(openai))
        openai.enqueue(FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":7,\"y\":8}" }]))
        const viaOpenAi = yield* c.decision(host.token, decisionBody(host, task, { screenshot }))
        assert.strictEqual(viaOpenAi.status, 200, viaOpenAi.text)
        const user = (openai.chatRequests()[0]?.body as any).messages.at(-1)
        assert.deepStrictEqual(user, {
          role: "user",
          content: [
            { type: "text", text: "Step 1: open the settings." },
            { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }
          ]
        })

        anthropic.reset()
        yield* activeProfile(c, anthropicProfile(anthropic))
        anthropic.enqueue(FakeAnthropic.reply.toolUse([{ name: "click", input: { x: 9, y: 9 } }]))
        const viaAnthropic = yield* c.decision(host.token, decisionBody(host, task, { screenshot }))
        assert.strictEqual(viaAnthropic.status, 200, viaAnthropic.text)
        const message = (anthropic.messageRequests()[0]?.body as any).messages.at(-1)
        assert.deepStrictEqual(message.content, [
          { type: "text", text: "Step 1: open the settings." },
          { type: "image", source: { type: "base64", media_type: "image/png", data: png } }
        ])

        assert.strictEqual((yield* decisionsOf(c, task.taskId)).length, 2)
        const stored = (yield* databaseText).text
        assert.notInclude(stored, png, "the screenshot bytes are in no table")
        assert.notInclude(stored, png.slice(0, 24))
      }))

    it.effect("Endpoint cannot resolve a decision", () =>
      Effect.gen(function*() {
        const c = yield* api
        const openai = yield* FakeOpenAi.FakeOpenAiServer
        const anthropic = yield* FakeAnthropic.FakeAnthropicServer
        const { host, task } = yield* claimedTask(c)
        yield* activeProfile(c, openAiProfile(openai))
        const cases: Array<[FakeOpenAi.FakeReply, string]> = [
          [FakeOpenAi.reply.text("Click the gear icon."), "no_tool_call"],
          [FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":1,\"y\":1}" }, { name: "finish", arguments: "{}" }]), "multiple_tool_calls"],
          [FakeOpenAi.reply.toolCalls([{ name: "format_disk", arguments: "{}" }]), "invalid_tool_call"],
          [FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\": 1," }]), "invalid_tool_call"],
          [FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "[1, 2]" }]), "invalid_tool_call"]
        ]
        for (const [reply, code] of cases) {
          openai.enqueue(reply)
          const res = yield* c.decision(host.token, decisionBody(host, task))
          assert.strictEqual(res.status, 502, `${code}: ${res.text}`)
          assert.strictEqual(res.json.code, code)
          assert.isUndefined(res.json.toolName, "never a default decision")
        }
        yield* activeProfile(c, anthropicProfile(anthropic))
        anthropic.enqueue(FakeAnthropic.reply.toolUse([{ name: "click", input: "x=1" }]))
        const anthropicBad = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(anthropicBad.json.code, "invalid_tool_call")
        assert.deepStrictEqual(yield* decisionsOf(c, task.taskId), [], "nothing persisted for any of them")
      }))

    it.effect("a profile switch applies to the next request, over the pool already open to that base URL", () =>
      Effect.gen(function*() {
        const c = yield* api
        const openai = yield* FakeOpenAi.FakeOpenAiServer
        openai.reset()
        const { host, task } = yield* claimedTask(c)
        openai.respondWith(() => FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":1,\"y\":1}" }]))
        const keys = ["sk-switch-one", "sk-switch-two", "sk-switch-three"]
        for (const [i, key] of keys.entries()) {
          yield* activeProfile(c, openAiProfile(openai, { apiKey: key, model: `model-${i}` }))
          const res = yield* c.decision(host.token, decisionBody(host, task))
          assert.strictEqual(res.status, 200)
        }
        const sent = openai.chatRequests()
        assert.deepStrictEqual(sent.map((r) => r.headers.authorization), keys.map((k) => `Bearer ${k}`))
        assert.deepStrictEqual(sent.map((r) => (r.body as any).model), ["model-0", "model-1", "model-2"])
        assert.strictEqual(new Set(sent.map((r) => r.remotePort)).size, 1, "one kept-alive connection: no pool per request or per profile")
      }))

    it.effect("the OpenAPI document lists every answer of the planner and host routes", () =>
      Effect.gen(function*() {
        const doc = (yield* request("/openapi.json")).json
        const statuses = (path: string) => Object.keys(doc.paths[path].post.responses)
        assert.includeMembers(statuses("/internal/planner/decision"), ["200", "400", "401", "403", "404", "409", "502", "503", "504"])
        assert.includeMembers(statuses("/internal/hosts/{hostId}/claim"), ["200", "204", "401", "403"])
        assert.includeMembers(statuses("/internal/tasks/{taskId}/lease"), ["200", "400", "401", "403", "404", "409"])
        assert.includeMembers(statuses("/admin/provider-profiles"), ["201", "400", "401", "409", "503"])
        const codes = JSON.stringify(doc.paths["/internal/planner/decision"].post.responses)
        for (const ref of ["NoToolCall", "MultipleToolCalls", "InvalidToolCall", "ProviderTimeout", "NoActiveProfile", "CredentialUnavailable", "LeaseLost"]) {
          assert.include(codes, ref)
        }
        // Host and admin tokens are always required (only CHAT_TOKEN is optional).
        for (const path of ["/internal/planner/decision", "/admin/hosts"]) {
          assert.notDeepInclude(doc.paths[path].post.security, {})
        }
        assert.notInclude(JSON.stringify(doc), "sk-")
      }))

    it.effect("provider profiles: created without echoing the key, listed without it, one active", () =>
      Effect.gen(function*() {
        const c = yield* api
        const name = uniqueName("listed")
        const res = yield* c.admin.post("/admin/provider-profiles", {
          name, provider: "anthropic", model: "claude-x", timeoutMs: 1000, apiKey: "sk-ant-listed-secret"
        })
        assert.strictEqual(res.status, 201)
        assert.deepStrictEqual(Object.keys(res.json), ["profileId"])
        const taken = yield* c.admin.post("/admin/provider-profiles", {
          name, provider: "anthropic", model: "claude-x", timeoutMs: 1000, apiKey: "sk-other"
        })
        assert.strictEqual(taken.status, 409)
        assert.strictEqual(taken.json.code, "profile_name_taken")
        const bad = yield* c.admin.post("/admin/provider-profiles", { name: "x", provider: "gemini", model: "m", timeoutMs: 1, apiKey: "k" })
        assert.strictEqual(bad.status, 400)
        const unknown = yield* c.admin.post("/admin/provider-profiles/prof_nope/activate")
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(unknown.json.code, "profile_not_found")

        const list = yield* c.admin.get("/admin/provider-profiles")
        assert.notInclude(list.text, "sk-ant-listed-secret")
        const listed = list.json.profiles.find((p: { profileId: string }) => p.profileId === res.json.profileId)
        assert.deepInclude(listed, { name, provider: "anthropic", model: "claude-x", timeoutMs: 1000, baseUrl: "https://api.anthropic.com/v1", active: false })
        assert.strictEqual(list.json.profiles.filter((p: { active: boolean }) => p.active).length, 1)
      }))
  })
})
