/**
 * The planner's configuration comes from the database profile only, and no
 * secret leaks: the server runs with decoy provider variables in its
 * configuration and in `process.env` (the chat route's `LLM_*`, the SDKs'
 * `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`, planner-looking names), each
 * pointing at a decoy provider that must never hear from the planner; then
 * every table's text and every log line is searched for the secrets in play.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as ProviderConfig from "@switchboard/providers"
import { ADMIN_TOKEN, CREDENTIAL_KEY, client, databaseText, decisionBody, layerPlannerServer, logLines, plannerEnv } from "../support/ControlPlane.ts"
import { FakeAnthropic, FakeOpenAi } from "@switchboard/providers/testing"
import { baseUrl, postJson } from "../support/TestServer.ts"

const PROFILE_KEY = "sk-profile-only-source-5e1b"
const DECOY_SECRETS = ["sk-decoy-llm-key", "sk-decoy-openai-key", "sk-decoy-anthropic-key", "sk-decoy-planner-key"]

class Fakes extends Context.Service<Fakes, {
  readonly profile: FakeOpenAi.FakeOpenAi
  readonly decoyOpenAi: FakeOpenAi.FakeOpenAi
  readonly decoyAnthropic: FakeAnthropic.FakeAnthropic
}>()("test/Fakes") {}

const decoyEnv = (openai: string, anthropic: string): Record<string, string> => ({
  LLM_PROVIDER: "openai-compatible",
  LLM_MODEL: "decoy-model",
  LLM_API_KEY: "sk-decoy-llm-key",
  LLM_BASE_URL: openai,
  LLM_TIMEOUT_MS: "10000",
  OPENAI_API_KEY: "sk-decoy-openai-key",
  OPENAI_BASE_URL: openai,
  ANTHROPIC_API_KEY: "sk-decoy-anthropic-key",
  ANTHROPIC_BASE_URL: anthropic,
  PLANNER_PROVIDER: "anthropic",
  PLANNER_MODEL: "decoy-planner-model",
  PLANNER_API_KEY: "sk-decoy-planner-key",
  PLANNER_BASE_URL: anthropic,
  PLANNER_TIMEOUT_MS: "1"
})

/** Decoys in the server's configuration and in process.env for the layer's lifetime. */
const layerServer = Layer.unwrap(Effect.gen(function*() {
  const profile = yield* FakeOpenAi.scoped({ apiKey: PROFILE_KEY })
  const decoyOpenAi = yield* FakeOpenAi.scoped()
  const decoyAnthropic = yield* FakeAnthropic.scoped()
  const decoys = decoyEnv(decoyOpenAi.url, decoyAnthropic.url)
  yield* Effect.acquireRelease(
    Effect.sync(() => {
      const saved = Object.fromEntries(Object.keys(decoys).map((k) => [k, process.env[k]]))
      Object.assign(process.env, decoys)
      return saved
    }),
    (saved) => Effect.sync(() => {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    })
  )
  return Layer.mergeAll(
    layerPlannerServer(plannerEnv(decoys), ProviderConfig.layer),
    Layer.succeed(Fakes, Fakes.of({ profile, decoyOpenAi, decoyAnthropic }))
  )
}))

const forms = (secret: string) => [secret, Buffer.from(secret).toString("hex"), Buffer.from(secret).toString("base64")]

describe("planner configuration and secrets", () => {
  layer(layerServer, { excludeTestServices: true })("a server with decoy provider variables", (it) => {
    it.effect("Database profile is the only planner configuration source", () =>
      Effect.gen(function*() {
        const c = client(yield* baseUrl)
        const { decoyAnthropic, decoyOpenAi, profile } = yield* Fakes
        // The decoys are live: the chat route, configured by LLM_*, does reach its decoy.
        const chat = yield* postJson("/api/agent/chat", { messages: [{ id: "u1", role: "user", content: "hi", timestamp: 1 }] })
        assert.strictEqual(chat.status, 200, chat.text)
        assert.strictEqual(decoyOpenAi.chatRequests().length, 1)
        decoyOpenAi.reset()

        const host = yield* c.addHost()
        yield* c.addTask("only the profile", host.hostId)
        const task = yield* c.claim(host)
        yield* c.activate(yield* c.addProfile({
          name: "the-profile", provider: "openai-compatible", model: "profile-model", timeoutMs: 5_000, baseUrl: profile.url, apiKey: PROFILE_KEY
        }))
        profile.enqueue(FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":1,\"y\":2}" }]))
        const res = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(res.status, 200, res.text)

        assert.strictEqual(decoyOpenAi.requests.length, 0, "no decision reached a provider named by the environment")
        assert.strictEqual(decoyAnthropic.requests.length, 0)
        const [sent] = profile.chatRequests()
        assert.strictEqual(sent?.headers.authorization, `Bearer ${PROFILE_KEY}`)
        assert.strictEqual((sent?.body as any).model, "profile-model")
        const wire = JSON.stringify(sent?.headers) + sent!.rawBody.toString("utf8")
        for (const decoy of [...DECOY_SECRETS, "decoy-model", "decoy-planner-model"]) assert.notInclude(wire, decoy)
      }))

    it.effect("no provider key, host token, ADMIN_TOKEN or CREDENTIAL_KEY in any table or log line", () =>
      Effect.gen(function*() {
        const c = client(yield* baseUrl)
        const { profile } = yield* Fakes
        const host = yield* c.addHost("secretive")
        yield* c.addTask("leak nothing", host.hostId)
        const task = yield* c.claim(host)
        // A profile with a wrong key: the provider's 401 echoes it, and the server logs that failure.
        const wrongKey = "sk-wrong-key-that-is-echoed-9c3d"
        yield* c.activate(yield* c.addProfile({
          name: "wrong", provider: "openai-compatible", model: "m", timeoutMs: 5_000, baseUrl: profile.url, apiKey: wrongKey
        }))
        const failed = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(failed.status, 502)
        assert.notInclude(failed.text, wrongKey)
        // A timeout, and a success.
        yield* c.activate(yield* c.addProfile({
          name: "right", provider: "openai-compatible", model: "m", timeoutMs: 150, baseUrl: profile.url, apiKey: PROFILE_KEY
        }))
        profile.enqueue(FakeOpenAi.reply.hang(), FakeOpenAi.reply.toolCalls([{ name: "finish", arguments: "{\"summary\":\"s\"}" }]))
        assert.strictEqual((yield* c.decision(host.token, decisionBody(host, task))).status, 504)
        assert.strictEqual((yield* c.decision(host.token, decisionBody(host, task))).status, 200)
        const profiles = yield* c.admin.get("/admin/provider-profiles")
        const hosts = yield* c.admin.get("/admin/hosts")
        const openapi = yield* c.admin.get("/openapi.json")

        const { tables, text } = yield* databaseText
        assert.includeMembers(tables, ["hosts", "tasks", "provider_profiles", "planner_decisions"])
        assert.isTrue(logLines.some((l) => l.includes("planner provider call failed")), "the failures were logged")
        const secrets = [PROFILE_KEY, wrongKey, host.token, ADMIN_TOKEN, CREDENTIAL_KEY, ...DECOY_SECRETS]
        for (const secret of secrets) {
          for (const form of forms(secret)) {
            assert.notInclude(text, form, "database")
            for (const line of logLines) assert.notInclude(line, form, "log line")
          }
          for (const answer of [profiles.text, hosts.text, openapi.text]) assert.notInclude(answer, secret)
        }
        assert.notInclude(text, Buffer.from(CREDENTIAL_KEY, "base64").toString("hex"), "nor the key's raw bytes")
      }))
  })
})
