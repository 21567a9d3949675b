/**
 * Sub-agent kinds an operator defines (docs/subagents.md): the admin routes
 * (written, listed with the built-ins, deleted unless an agent names them), and a
 * defined kind end to end — its job tool offered with its parameters, the
 * filled prompt, a wrong `submit_result` shown back, a right one stored as the
 * result and steered once — with its MCP server's tools, on the real sub-agents.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage, JobRecord, ProviderChatParams, ProviderChatResponse } from "@switchboard/domain"
import { subagentArtifactOf, subagentResultOf } from "@switchboard/domain"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { Effect } from "effect"
import * as RealSubagents from "../../../src/jobs/subagents/RealSubagents.ts"
import { startFakeMcp, textTool } from "../../support/FakeMcp.ts"
import { eventually, jobsOf, transcriptOf, user } from "../../support/JobsHelpers.ts"
import { backend } from "../../support/TestDatabase.ts"
import { layerTestServer, postJson, request } from "../../support/TestServer.ts"
import { settings } from "../subagents/Harness.ts"

const ADMIN_TOKEN = "admin-token-for-kinds"
const CREDENTIAL_KEY = Buffer.alloc(32, 7).toString("base64")
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }

const put = (path: string, body: unknown) =>
  request(path, { method: "PUT", headers: { "content-type": "application/json", ...admin }, body: JSON.stringify(body) })
const del = (path: string) => request(path, { method: "DELETE", headers: admin })

const resultSchema = {
  type: "object",
  properties: { eligible: { type: "boolean" }, note: { type: "string" } },
  required: ["eligible", "note"],
  additionalProperties: false
}

const refundCheck = (mcpUrl?: string) => ({
  description: "Check in the background whether an order may be refunded.",
  input: [
    { key: "orderId", type: "string", required: true, description: "The order's id." },
    { key: "reason", type: "string", required: false }
  ],
  systemPrompt: "You check refunds. The order is {{input.orderId}}; the customer says: {{input.reason}}.",
  result: resultSchema,
  maxSteps: 4,
  ...(mcpUrl === undefined ? {} : { mcpServers: [{ name: "orders", url: mcpUrl, headers: { authorization: "Bearer orders-secret" } }] })
})

const SUBAGENT = "You check refunds."

/**
 * The chat model: "refund <order>" dispatches refund-check, an ack is answered "checking", a
 * steer "result: <its second line>". The sub-agent: looks the order up (when offered the MCP
 * tool), submits a wrong result first, then a right one.
 */
const model = (params: ProviderChatParams): ProviderChatResponse => {
  const last = params.messages.at(-1)!
  if (params.systemPrompt?.startsWith(SUBAGENT) === true) {
    const tools = params.messages.filter((m) => m.role === "tool")
    if (tools.length === 0 && params.toolSchemas.some((t) => t.name === "orders__lookup")) {
      return { content: "", toolCalls: [{ id: "s_lookup", name: "orders__lookup", args: { order: "A1" } }] }
    }
    const submitted = tools.filter((m) => m.toolResult?.name === "submit_result")
    if (submitted.length === 0) return { content: "", toolCalls: [{ id: "s_1", name: "submit_result", args: { eligible: "yes" } }] }
    return { content: "", toolCalls: [{ id: "s_2", name: "submit_result", args: { eligible: true, note: `after: ${submitted[0]!.toolResult?.error}` } }] }
  }
  if (last.role === "tool") return { content: "checking" }
  if (last.role === "user" && subagentResultOf(last) !== undefined) return { content: `result: ${last.content.split("\n")[2] ?? ""}` }
  const match = /^refund (\S+)$/.exec(last.content)
  return match === null
    ? { content: `you said: ${last.content}` }
    : { content: "", toolCalls: [{ id: `c_${params.messages.length}`, name: "refund-check", args: { orderId: match[1], reason: "it broke" } }] }
}

describe(`sub-agent kinds of your own on ${backend} PostgreSQL`, () => {
  const fake = makeFakeProvider()
  fake.answerWith((params) => Effect.succeed(model(params)))
  const server = layerTestServer(fake.layer, { ADMIN_TOKEN, CREDENTIAL_KEY }, { subagents: RealSubagents.layerWithMcp(settings()) })

  layer(server, { excludeTestServices: true })("over HTTP", (it) => {
    it.effect("operators define, list and delete kinds; built-ins are read-only; an agent names only known kinds", () =>
      Effect.gen(function*() {
        const created = yield* put("/admin/subagents/refund-check", refundCheck("http://127.0.0.1:9/mcp"))
        assert.strictEqual(created.status, 200)
        assert.strictEqual(created.json.kind, "refund-check")
        assert.strictEqual(created.json.maxSteps, 4)
        assert.isFalse(created.json.builtIn)
        assert.deepStrictEqual(created.json.mcpServers[0].headerNames, ["authorization"])
        assert.notInclude(created.text, "orders-secret")
        assert.strictEqual((yield* put("/admin/subagents/refund-check", refundCheck("http://127.0.0.1:9/mcp"))).status, 200)

        const listed = yield* request("/admin/subagents", { headers: admin })
        assert.strictEqual(listed.status, 200)
        assert.deepStrictEqual(listed.json.subagents.map((k: { kind: string }) => k.kind), ["research", "demo", "visual", "refund-check"])
        assert.deepStrictEqual(listed.json.subagents.map((k: { builtIn: boolean }) => k.builtIn), [true, true, true, false])
        assert.deepStrictEqual(listed.json.subagents[0].tools, ["web_search", "fetch_url"])
        assert.strictEqual(listed.json.subagents[0].result.type, "object")
        assert.notInclude(listed.text, "orders-secret")

        const builtIn = yield* put("/admin/subagents/research", refundCheck())
        assert.strictEqual(builtIn.status, 409)
        assert.strictEqual(builtIn.json.code, "subagent_builtin")
        assert.strictEqual((yield* del("/admin/subagents/demo")).json.code, "subagent_builtin")

        const notObject = yield* put("/admin/subagents/bad", { ...refundCheck(), result: { type: "string" } })
        assert.strictEqual(notObject.status, 400)
        assert.match(notObject.json.error, /result: must be a JSON Schema of an object/)
        const twice = yield* put("/admin/subagents/bad", { ...refundCheck(), input: [refundCheck().input[0], refundCheck().input[0]] })
        assert.strictEqual(twice.status, 400)
        assert.match(twice.json.error, /input\[1\]: the parameter "orderId" is declared twice/)
        assert.strictEqual((yield* put("/admin/subagents/Bad_Name", refundCheck())).status, 400)
        assert.strictEqual((yield* put("/admin/subagents/bad", { ...refundCheck(), tools: ["rm_rf"] })).status, 400)
        const unauthenticated = yield* request("/admin/subagents")
        assert.strictEqual(unauthenticated.status, 401)

        const unknown = yield* put("/admin/agents/support", { systemPrompt: "Support.", jobKinds: ["research", "nope"] })
        assert.strictEqual(unknown.status, 400)
        assert.match(unknown.json.error, /jobKinds\[1\]: no sub-agent kind "nope"/)
        assert.strictEqual((yield* put("/admin/agents/support", { systemPrompt: "Support.", jobKinds: ["refund-check"] })).status, 200)

        const inUse = yield* del("/admin/subagents/refund-check")
        assert.strictEqual(inUse.status, 409)
        assert.strictEqual(inUse.json.code, "subagent_in_use")
        assert.deepStrictEqual(inUse.json.agents, ["support"])
        assert.strictEqual((yield* del("/admin/agents/support")).status, 204)
        assert.strictEqual((yield* del("/admin/subagents/refund-check")).status, 204)
        const gone = yield* del("/admin/subagents/refund-check")
        assert.strictEqual(gone.status, 404)
        assert.strictEqual(gone.json.code, "subagent_not_found")
      }))

    it.effect("a defined kind end to end: offered with its parameters, its prompt filled, a wrong result shown back, the right one steered once", () =>
      Effect.scoped(Effect.gen(function*() {
        const mcp = yield* startFakeMcp([textTool("lookup", (args) => `order ${String(args["order"])} was paid on 3 May`)])
        assert.strictEqual((yield* put("/admin/subagents/refund-check", refundCheck(mcp.url))).status, 200)
        assert.strictEqual((yield* put("/admin/agents/support", { systemPrompt: "Support.", jobKinds: ["refund-check"] })).status, 200)

        const res = yield* postJson("/api/agent/chat", { agent: "support", chatId: "kinds-e2e", messages: [user("u1", "refund A1")] })
        assert.strictEqual(res.status, 200)
        assert.strictEqual(res.json.jobs[0].kind, "refund-check")
        const offered = fake.calls.find((c) => c.systemPrompt?.startsWith("Support.") === true)!
        const tool = offered.toolSchemas.find((t) => t.name === "refund-check")!
        assert.strictEqual(tool.description, "Check in the background whether an order may be refunded.")
        assert.deepStrictEqual(tool.parameters.map((p) => [p.key, p.required]), [["orderId", true], ["reason", false]])

        const [job] = yield* eventually(jobsOf("kinds-e2e"), (jobs) => jobs[0]?.status === "done", "the job to be done", 30_000)
        const result = job!.result as { readonly eligible?: unknown; readonly note?: unknown }
        assert.deepStrictEqual(job!.result, { eligible: true, note: result.note })
        assert.match(String(result.note), /^after: the result does not match its schema: at the top: must have required property 'note'/)

        const steps = fake.calls.filter((c) => c.systemPrompt?.startsWith(SUBAGENT) === true)
        assert.strictEqual(steps[0]!.systemPrompt?.split("\n")[0], "You check refunds. The order is A1; the customer says: it broke.")
        assert.deepStrictEqual(steps[0]!.toolSchemas.map((t) => t.name), ["orders__lookup", "submit_result"])
        assert.deepStrictEqual(steps[0]!.toolSchemas.at(-1)!.inputSchema, resultSchema)
        assert.deepStrictEqual(mcp.calls, [{ name: "lookup", args: { order: "A1" } }])
        assert.strictEqual(mcp.headersSeen.at(-1)?.["authorization"], "Bearer orders-secret")
        assert.strictEqual(steps.length, 3, "lookup, the wrong result, the right one")

        const transcript = yield* eventually(transcriptOf("kinds-e2e"), (m) => m.at(-1)?.content.startsWith("result:") === true, "the wake turn")
        const steers = transcript.filter((m: ChatMessage) => subagentResultOf(m)?.jobId === job!.id)
        assert.strictEqual(steers.length, 1)
        assert.deepStrictEqual(subagentArtifactOf(steers[0]!), { kind: "refund-check", result: job!.result! })
        assert.match(steers[0]!.content, /^The refund-check sub-agent finished\. Its result follows; use it as the user asked:\n\n/)
        assert.deepStrictEqual(steers[0]!.content.split("\n").slice(2, 3), ["eligible: true"], "in the schema's order")
        assert.strictEqual(transcript.filter((m: ChatMessage) => m.content.startsWith("result: ")).length, 1, "one wake turn")
      })))

    it.effect("a sub-agent that never submits a valid result ends in { error } within maxSteps", () =>
      Effect.gen(function*() {
        const body = { ...refundCheck(), maxSteps: 1, systemPrompt: `${SUBAGENT} Strict.` }
        assert.strictEqual((yield* put("/admin/subagents/strict-check", { ...body, description: "Strict." })).status, 200)
        assert.strictEqual((yield* put("/admin/agents/strict", { systemPrompt: "Support.", jobKinds: ["strict-check"] })).status, 200)
        fake.answerWith((params) =>
          Effect.succeed(
            params.messages.at(-1)?.content === "refund B2" && params.systemPrompt?.startsWith("Support.") === true
              ? { content: "", toolCalls: [{ id: "c_b2", name: "strict-check", args: { orderId: "B2" } }] }
              : model(params)
          )
        )
        const res = yield* postJson("/api/agent/chat", { agent: "strict", chatId: "kinds-strict", messages: [user("u1", "refund B2")] })
        assert.strictEqual(res.status, 200)
        const [job] = yield* eventually(jobsOf("kinds-strict"), (jobs: ReadonlyArray<JobRecord>) => jobs[0]?.status === "error", "the job to fail", 30_000)
        assert.deepStrictEqual(job!.result, { error: "no valid submit_result within 1 steps" })
        assert.strictEqual(job!.error, "no valid submit_result within 1 steps")
        const bad = yield* postJson("/api/agent/chat", { agent: "strict", chatId: "kinds-strict-2", messages: [user("u1", "hello")] })
        assert.strictEqual(bad.status, 200)
      }))
  })
})
