/**
 * An agent's MCP servers against fakes of the tests' own (support/FakeMcp.ts):
 * headers are write-only (they reach the server, are sealed at rest and
 * never answered), a server that is down is left out and the turn goes on,
 * a hanging tool is a timeout the model reads, an unknown tool and a huge
 * result are tool errors, a changed tool list — or a server restarted with
 * new tools — is seen by the next turns, and a key rotation re-seals the
 * headers.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import type { ChatMessage, ProviderChatParams } from "@switchboard/domain"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { callingModel, hangingTool, startFakeMcp, textTool } from "../support/FakeMcp.ts"
import { eventually, user } from "../support/JobsHelpers.ts"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { baseUrl, layerReplica, layerTestServer, postJsonAt, request, requestAt } from "../support/TestServer.ts"

const ADMIN_TOKEN = "admin-token-for-mcp"
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
const KEY_1 = Buffer.alloc(32, 1).toString("base64")
const KEY_2 = Buffer.alloc(32, 2).toString("base64")
const SECRET = "Bearer mcp-secret-4f1c9a"

const model = callingModel

const putAgent = (base: string, name: string, body: unknown) =>
  requestAt(base, `/admin/agents/${name}`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...admin },
    body: JSON.stringify(body)
  })

const turn = (base: string, agent: string, chatId: string, text: string) =>
  postJsonAt(base, "/api/agent/chat", { agent, chatId, messages: [user(`u_${chatId}`, text)] })

const offeredNames = (params: ProviderChatParams | undefined) => (params?.toolSchemas ?? []).map((t) => t.name).sort()

/** New chats of `agent`, one turn each, until the tools a turn is offered satisfy `seen` (the test's timeout bounds it). */
const turnsUntilOffered = (base: string, agent: string, fake: ReturnType<typeof makeFakeProvider>, seen: (names: ReadonlyArray<string>) => boolean) => {
  let n = 0
  return eventually(
    Effect.gen(function*() {
      yield* turn(base, agent, `${agent}-until-${++n}`, "hello")
      return offeredNames(fake.calls.at(-1))
    }),
    seen,
    `the tools ${agent} is offered to change`
  )
}

describe(`an agent's MCP servers, against fakes (${backend})`, () => {
  const fake = makeFakeProvider()
  fake.answerWith((params) => Effect.succeed(model(params)))
  const env = { ADMIN_TOKEN, CREDENTIAL_KEY: KEY_1, MCP_TIMEOUT_MS: "1500" }

  layer(layerTestServer(fake.layer, env), { excludeTestServices: true, timeout: 60_000 })("over HTTP", (it) => {
    it.effect("headers are write-only: sent to the server, sealed at rest, never answered, kept by a PUT without them", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([textTool("whoami", () => "you are the agent")])
        const server = { name: "crm", url: mcp.url, headers: { Authorization: SECRET } }
        const put = yield* putAgent(base, "crm-agent", { systemPrompt: "CRM", mcpServers: [server] })
        assert.strictEqual(put.status, 200, put.text)
        assert.deepStrictEqual(put.json.mcpServers, [{ name: "crm", url: mcp.url, headerNames: ["Authorization"] }])
        assert.notInclude(put.text, "mcp-secret")

        const res = yield* turn(base, "crm-agent", "crm-1", "call crm__whoami {}")
        assert.strictEqual(res.json.content, "tool said: you are the agent")
        assert.isTrue(mcp.headersSeen.length > 0 && mcp.headersSeen.every((h) => h["authorization"] === SECRET))

        // Never answered: not by the list, not by the agent's public view.
        const list = yield* request("/admin/agents", { headers: admin })
        assert.notInclude(list.text, "mcp-secret")
        assert.include(list.text, "Authorization")
        assert.notInclude((yield* request("/api/agents/crm-agent")).text, "mcp-secret")
        // Sealed at rest: no table holds the value.
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ readonly found: number }>`
          SELECT count(*)::int AS found FROM agents a LEFT JOIN agent_mcp_headers h ON h.agent = a.name
          WHERE a.definition::text LIKE ${"%mcp-secret%"} OR encode(h.ciphertext, 'escape') LIKE ${"%mcp-secret%"}`
        assert.strictEqual(rows[0]!.found, 0)
        const sealed = yield* sql<{ readonly server: string }>`SELECT server FROM agent_mcp_headers WHERE agent = 'crm-agent'`
        assert.deepStrictEqual(sealed.map((r) => r.server), ["crm"])

        // A PUT that leaves the headers out (what a GET gives back) keeps them; `{}` clears them.
        const again = yield* putAgent(base, "crm-agent", { systemPrompt: "CRM v2", mcpServers: [{ name: "crm", url: mcp.url }] })
        assert.deepStrictEqual(again.json.mcpServers[0].headerNames, ["Authorization"])
        const seen = mcp.headersSeen.length
        yield* turn(base, "crm-agent", "crm-2", "call crm__whoami {}")
        assert.isTrue(mcp.headersSeen.slice(seen).every((h) => h["authorization"] === SECRET))
        const cleared = yield* putAgent(base, "crm-agent", { systemPrompt: "CRM v3", mcpServers: [{ name: "crm", url: mcp.url, headers: {} }] })
        assert.deepStrictEqual(cleared.json.mcpServers[0].headerNames, [])
        assert.deepStrictEqual(yield* sql`SELECT server FROM agent_mcp_headers WHERE agent = 'crm-agent'`, [])

        // A value no HTTP request could carry is refused when written, never at a turn (where its error could quote it).
        const broken = yield* putAgent(base, "crm-agent", { systemPrompt: "CRM", mcpServers: [{ ...server, headers: { Authorization: "Bearer a\nX-Other: b" } }] })
        assert.strictEqual(broken.status, 400, broken.text)
        assert.match(broken.json.error, /mcpServers/)
        assert.notInclude(broken.text, "X-Other: b")
      }))

    it.effect("a server that is down is left out of the turn, which goes on with the others", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const up = yield* startFakeMcp([textTool("ping", () => "pong")])
        const put = yield* putAgent(base, "two-servers", {
          systemPrompt: "two",
          mcpServers: [{ name: "up", url: up.url }, { name: "down", url: "http://127.0.0.1:9/mcp" }]
        })
        assert.strictEqual(put.status, 200, put.text)
        const res = yield* turn(base, "two-servers", "down-1", "hello")
        assert.strictEqual(res.status, 200, res.text)
        assert.strictEqual(res.json.content, "you said: hello")
        assert.deepStrictEqual(offeredNames(fake.calls.at(-1)), ["up__ping"])
        // A call of the missing server's tool is a tool error the model reads, not a call left to the client.
        const called = yield* turn(base, "two-servers", "down-2", "call down__anything {}")
        assert.match(called.json.content, /^error: down__anything is not a tool of this agent's MCP servers now/)
        assert.isUndefined(called.json.toolCalls)
        const metrics = yield* request("/metrics")
        assert.match(metrics.text, /switchboard_mcp_list_failures_total\{server="down"\} [1-9]/)
      }))

    it.effect("a hanging tool is a timeout error the model reads; the next call on that server still works", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([hangingTool("slow"), textTool("quick", () => "done")])
        yield* putAgent(base, "hangs", { systemPrompt: "h", mcpServers: [{ name: "svc", url: mcp.url }] })
        const res = yield* turn(base, "hangs", "hang-1", "call svc__slow {}")
        assert.strictEqual(res.status, 200, res.text)
        assert.strictEqual(res.json.content, "error: svc: calling slow timed out after 1500 ms")
        const next = yield* turn(base, "hangs", "hang-2", "call svc__quick {}")
        assert.strictEqual(next.json.content, "tool said: done")
        const metrics = yield* request("/metrics")
        assert.match(metrics.text, /switchboard_mcp_calls_total\{server="svc",outcome="timeout"\} 1/)
        assert.match(metrics.text, /switchboard_mcp_calls_total\{server="svc",outcome="ok"\} [1-9]/)
      }))

    it.effect("a huge result, a tool error, invalid arguments: each a tool error, nothing huge stored", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([
          textTool("huge", () => "x".repeat(600 * 1024)),
          textTool("enormous", () => "y".repeat(3 * 1024 * 1024)),
          { name: "fails", run: async () => ({ content: [{ type: "text", text: "no such order" }], isError: true }) },
          textTool("structured", () => "", { type: "object", properties: {} })
        ])
        yield* putAgent(base, "errors", { systemPrompt: "e", mcpServers: [{ name: "svc", url: mcp.url }] })
        const huge = yield* turn(base, "errors", "err-1", "call svc__huge {}")
        assert.match(huge.json.content, /^error: the result of svc__huge is \d+ bytes, over the 262144 a tool result may be$/)
        // An answer past what is read at all (2 MiB) is cut as it arrives: an error too, never read whole.
        const enormous = yield* turn(base, "errors", "err-3", "call svc__enormous {}")
        assert.match(enormous.json.content, /^error: svc: calling enormous /)
        const fails = yield* turn(base, "errors", "err-2", "call svc__fails {}")
        assert.strictEqual(fails.json.content, "error: no such order")
        const transcript = (yield* request("/api/chats/err-1/messages")).json.messages as Array<ChatMessage>
        assert.isBelow(JSON.stringify(transcript).length, 10_000)
      }))

    it.effect("a tool list that changes is seen by the next turn (the server's list_changed)", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([textTool("first", () => "1")])
        yield* putAgent(base, "changing", { systemPrompt: "c", mcpServers: [{ name: "svc", url: mcp.url }] })
        yield* turn(base, "changing", "change-1", "hello")
        assert.deepStrictEqual(offeredNames(fake.calls.at(-1)), ["svc__first"])
        yield* Effect.promise(() => mcp.setTools([textTool("first", () => "1"), textTool("second", () => "2")]))
        // The notification reaches the client on its own stream: the next turns see the new tool once it has.
        yield* turnsUntilOffered(base, "changing", fake, (names) => names.includes("svc__second"))
        const called = yield* turn(base, "changing", "change-call", "call svc__second {}")
        assert.strictEqual(called.json.content, "tool said: 2")
      }))

    it.effect("a server that restarted (its sessions gone, no notification) is connected to anew, its new tools offered", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        const mcp = yield* startFakeMcp([textTool("old", () => "old")])
        yield* putAgent(base, "restarting", { systemPrompt: "r", mcpServers: [{ name: "svc", url: mcp.url }] })
        yield* turn(base, "restarting", "restart-1", "hello")
        assert.deepStrictEqual(offeredNames(fake.calls.at(-1)), ["svc__old"])
        yield* Effect.promise(() => mcp.restart([textTool("new", () => "new")]))
        yield* turnsUntilOffered(base, "restarting", fake, (names) => names.length === 1 && names[0] === "svc__new")
        const called = yield* turn(base, "restarting", "restart-call", "call svc__new {}")
        assert.strictEqual(called.json.content, "tool said: new")
      }))
  })
})

describe(`MCP headers without a credential key, and across a key rotation (${backend})`, () => {
  it.live("no CREDENTIAL_KEY: headers are refused (503 credential_unavailable) and nothing is stored", () =>
    Effect.gen(function*() {
      const db = yield* makeTestDatabase
      const fake = makeFakeProvider()
      const memoMap = yield* Layer.makeMemoMap
      const scope = yield* Effect.scope
      const replica = (env: Record<string, string>) =>
        Layer.buildWithMemoMap(Layer.fresh(layerReplica(fake.layer, db.client(), {}, { ADMIN_TOKEN, ...env })), memoMap, scope).pipe(
          Effect.flatMap((services) => baseUrl.pipe(Effect.provide(services)))
        )
      const mcp = yield* startFakeMcp([textTool("whoami", () => "rotated fine")])
      fake.answerWith((params) => Effect.succeed(model(params)))

      const keyless = yield* replica({})
      const refused = yield* putAgent(keyless, "keyless", {
        systemPrompt: "k",
        mcpServers: [{ name: "svc", url: mcp.url, headers: { authorization: SECRET } }]
      })
      assert.strictEqual(refused.status, 503, refused.text)
      assert.strictEqual(refused.json.code, "credential_unavailable")
      assert.strictEqual((yield* requestAt(keyless, "/admin/agents", { headers: admin })).json.agents.length, 1, "the built-in only")

      // Written under key 1; a replica on key 2 (key 1 its previous) re-seals them, then opens them with key 2.
      const first = yield* replica({ CREDENTIAL_KEY: KEY_1 })
      const put = yield* putAgent(first, "rotating", {
        systemPrompt: "r",
        mcpServers: [{ name: "svc", url: mcp.url, headers: { authorization: SECRET } }]
      })
      assert.strictEqual(put.status, 200, put.text)
      const second = yield* replica({ CREDENTIAL_KEY: KEY_2, CREDENTIAL_KEY_PREVIOUS: KEY_1 })
      const rotated = yield* requestAt(second, "/admin/provider-profiles/rotate-credential-key", { method: "POST", headers: admin })
      assert.strictEqual(rotated.status, 200, rotated.text)
      assert.deepStrictEqual(rotated.json.mcpHeaders, { reencrypted: 1, alreadyCurrent: 0, undecryptable: [] })
      const onlyKey2 = yield* replica({ CREDENTIAL_KEY: KEY_2 })
      const res = yield* turn(onlyKey2, "rotating", "rot-1", "call svc__whoami {}")
      assert.strictEqual(res.json.content, "tool said: rotated fine")
      assert.strictEqual(mcp.headersSeen.at(-1)?.["authorization"], SECRET)
    }), { timeout: 120_000 })
})
