/**
 * Agents from the CLI, against a fake server: `admin agents apply` (JSON and
 * YAML, idempotent, checked against the schema before anything is sent),
 * `admin agents list`, and `chat --agent` refusing an agent whose client
 * tools this CLI does not implement.
 */
import { agentDefinitionOf, agentInfoOf, BUILT_IN_AGENT, keptHeaderNames } from "@switchboard/domain"
import type { AgentBody, AgentDefinition } from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { startFakeServer, tempDir } from "@switchboard/client/testing"
import type { RecordedRequest } from "@switchboard/client/testing"
import { runCli } from "./support/RunCli.ts"

const examples = path.resolve(import.meta.dirname, "../../../examples/agents")

const builtIn: AgentDefinition = {
  name: BUILT_IN_AGENT,
  description: "The media editor",
  systemPrompt: "You edit media.",
  tools: [{ name: "transcribe_video", description: "Transcribes", parameters: [] }],
  jobKinds: ["research"],
  builtIn: true
}

/** The admin and public agent routes over a map; every request is recorded. */
const agentsServer = () => {
  const agents = new Map<string, AgentDefinition>([[builtIn.name, builtIn]])
  const handler = (request: RecordedRequest) => {
    const name = decodeURIComponent(request.path.split("/").at(-1) ?? "")
    if (request.method === "GET" && request.path === "/admin/agents") return { json: { agents: [...agents.values()] } }
    if (request.method === "PUT" && request.path.startsWith("/admin/agents/")) {
      // As the server does: a server written without headers keeps the stored ones' names.
      const definition = agentDefinitionOf(name, JSON.parse(request.body.toString("utf8")) as AgentBody, keptHeaderNames(agents.get(name)))
      agents.set(name, definition)
      return { json: definition }
    }
    if (request.method === "GET" && request.path.startsWith("/api/agents/")) {
      const agent = agents.get(name)
      return agent === undefined
        ? { status: 404, json: { error: `No agent named "${name}"`, code: "agent_not_found", agent: name } }
        : { json: agentInfoOf(agent) }
    }
    return { status: 500, json: { error: `unexpected ${request.method} ${request.path}`, code: "internal_error" } }
  }
  return { agents, handler }
}

const admin = { env: { ADMIN_TOKEN: "admin-secret" } }
const puts = (requests: ReadonlyArray<RecordedRequest>) => requests.filter((r) => r.method === "PUT").map((r) => r.path)

describe("switchboard admin agents", () => {
  it.effect("apply is idempotent: created, then unchanged with no PUT, then updated when the file changes", () =>
    Effect.gen(function*() {
      const fake = agentsServer()
      const server = yield* startFakeServer(fake.handler)
      const file = path.join(examples, "support.yaml")

      const first = yield* runCli(["admin", "agents", "apply", file, "--server", server.url], admin)
      assert.strictEqual(first.code, 0, first.stderr)
      assert.match(first.stdout, /^created\s+support$/m)
      assert.deepStrictEqual(puts(server.requests), ["/admin/agents/support"])
      assert.strictEqual(server.requests[1]!.headers.authorization, "Bearer admin-secret")
      assert.deepStrictEqual(fake.agents.get("support")?.tools.map((t) => t.name), ["lookup_order"])

      const second = yield* runCli(["admin", "agents", "apply", file, "--server", server.url], admin)
      assert.strictEqual(second.code, 0, second.stderr)
      assert.match(second.stdout, /^unchanged\s+support$/m)
      assert.strictEqual(puts(server.requests).length, 1, "an unchanged agent is not written")

      const edited = path.join(tempDir(), "support.yaml")
      fs.writeFileSync(edited, fs.readFileSync(file, "utf8").replace("Be brief and friendly.", "Be brief."))
      const third = yield* runCli(["admin", "agents", "apply", edited, "--server", server.url, "--json"], admin)
      assert.strictEqual(third.code, 0, third.stderr)
      assert.deepStrictEqual(JSON.parse(third.stdout), { agents: [{ name: "support", action: "updated" }] })
      assert.strictEqual(puts(server.requests).length, 2)
    }))

  it.effect("MCP servers: applied as written; idempotent without header values, written every time with them (write-only)", () =>
    Effect.gen(function*() {
      const fake = agentsServer()
      const server = yield* startFakeServer(fake.handler)
      const calculator = path.join(examples, "calculator.yaml")
      const first = yield* runCli(["admin", "agents", "apply", calculator, "--server", server.url], admin)
      assert.strictEqual(first.code, 0, first.stderr)
      assert.deepStrictEqual(fake.agents.get("calculator")?.mcpServers, [
        { name: "everything", url: "http://127.0.0.1:3001/mcp", tools: ["get-sum", "echo"], headerNames: [] }
      ])
      const second = yield* runCli(["admin", "agents", "apply", calculator, "--server", server.url], admin)
      assert.match(second.stdout, /^unchanged\s+calculator$/m)

      const withToken = path.join(tempDir(), "crm.json")
      const crm = { name: "crm", url: "https://crm.example/mcp" }
      fs.writeFileSync(withToken, JSON.stringify([{ name: "crm-agent", systemPrompt: "CRM", mcpServers: [{ ...crm, headers: { Authorization: "Bearer t" } }] }]))
      yield* runCli(["admin", "agents", "apply", withToken, "--server", server.url], admin)
      const again = yield* runCli(["admin", "agents", "apply", withToken, "--server", server.url], admin)
      assert.match(again.stdout, /^updated\s+crm-agent$/m, "a value the server never answers cannot be compared: written again")
      // The same agent without the value (the token kept by the server): nothing to write.
      const without = path.join(tempDir(), "crm-kept.json")
      fs.writeFileSync(without, JSON.stringify([{ name: "crm-agent", systemPrompt: "CRM", mcpServers: [crm] }]))
      const kept = yield* runCli(["admin", "agents", "apply", without, "--server", server.url], admin)
      assert.match(kept.stdout, /^unchanged\s+crm-agent$/m)
      assert.deepStrictEqual(fake.agents.get("crm-agent")?.mcpServers?.[0]?.headerNames, ["Authorization"])
    }))

  it.effect("accepts JSON, a bare list included, and lists the agents", () =>
    Effect.gen(function*() {
      const fake = agentsServer()
      const server = yield* startFakeServer(fake.handler)
      const dir = tempDir()
      const bare = path.join(dir, "agents.json")
      fs.writeFileSync(bare, JSON.stringify([{ name: "helper", systemPrompt: "Help.", jobKinds: ["research"] }]))
      const wrapped = path.join(dir, "more.json")
      fs.writeFileSync(wrapped, JSON.stringify({ agents: [{ name: "helper", systemPrompt: "Help.", jobKinds: ["research"] }] }))

      const applied = yield* runCli(["admin", "agents", "apply", bare, "--server", server.url], admin)
      assert.strictEqual(applied.code, 0, applied.stderr)
      assert.match(applied.stdout, /^created\s+helper$/m)
      const again = yield* runCli(["admin", "agents", "apply", wrapped, "--server", server.url], admin)
      assert.match(again.stdout, /^unchanged\s+helper$/m)
      const research = yield* runCli(["admin", "agents", "apply", path.join(examples, "research-assistant.yaml"), "--server", server.url], admin)
      assert.strictEqual(research.code, 0, research.stderr)

      const list = yield* runCli(["admin", "agents", "list", "--server", server.url], admin)
      assert.strictEqual(list.code, 0, list.stderr)
      const lines = list.stdout.trim().split("\n")
      assert.match(lines[0]!, /^media-editor \(built in\)\s+tools transcribe_video\s+jobs research/)
      assert.isTrue(lines.some((line) => /^helper\s+tools -\s+jobs research$/.test(line)), list.stdout)
      assert.isTrue(lines.some((line) => line.startsWith("research-assistant  tools -  jobs research  Sends researchers")), list.stdout)
    }))

  const invalidFiles: ReadonlyArray<readonly [string, string, RegExp]> = [
    ["missing.yaml", "agents:\n  - name: ok\n    systemPrompt: Hi\n  - name: broken\n    tools: []\n", /agents\[1\]\.systemPrompt/],
    ["badname.json", JSON.stringify({ agents: [{ name: "Bad Name", systemPrompt: "Hi" }] }), /agents\[0\]\.name/],
    ["typo.yaml", "- name: typo\n  systemPrompt: Hi\n  jobkinds: [research]\n", /\[0\]\.jobkinds/],
    [
      "tool.yaml",
      "- name: t\n  systemPrompt: Hi\n  tools:\n    - name: x\n      description: d\n      parameters: [{ key: a, type: text, required: true }]\n",
      /\[0\]\.tools\[0\]\.parameters\[0\]\.type/
    ],
    ["twice.yaml", "- name: same\n  systemPrompt: a\n- name: same\n  systemPrompt: b\n", /"same" is defined twice/],
    ["notyaml.yaml", "agents: [\n", /not YAML/],
    ["shape.json", JSON.stringify({ name: "x" }), /expected `agents:`/]
  ]
  for (const [name, text, expected] of invalidFiles) {
    it.effect(`an invalid file (${name}) is refused before anything is sent, the error naming the path`, () =>
      Effect.gen(function*() {
        const server = yield* startFakeServer(agentsServer().handler)
        const file = path.join(tempDir(), name)
        fs.writeFileSync(file, text)
        const run = yield* runCli(["admin", "agents", "apply", file, "--server", server.url], admin)
        assert.strictEqual(run.code, 1)
        assert.include(run.stderr, `Invalid agents file ${file}`)
        assert.match(run.stderr, expected, run.stderr)
        assert.deepStrictEqual(server.requests, [], "nothing is sent for an invalid file")
      }))
  }

  it.effect("a file naming the built-in agent is refused before any PUT", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(agentsServer().handler)
      const file = path.join(tempDir(), "builtin.yaml")
      fs.writeFileSync(file, `- name: ${BUILT_IN_AGENT}\n  systemPrompt: mine now\n`)
      const run = yield* runCli(["admin", "agents", "apply", file, "--server", server.url], admin)
      assert.strictEqual(run.code, 1)
      assert.include(run.stderr, `agent "${BUILT_IN_AGENT}" is built in`)
      assert.deepStrictEqual(puts(server.requests), [])
    }))
})

describe("switchboard chat --agent", () => {
  it.effect("refuses an agent whose client tools the CLI lacks, naming them, before the first turn", () =>
    Effect.gen(function*() {
      const fake = agentsServer()
      fake.agents.set("support", agentDefinitionOf("support", {
        systemPrompt: "Help customer {{context.customerId}}.",
        tools: [
          { name: "lookup_order", description: "Looks an order up", parameters: [] },
          { name: "transcribe_video", description: "Transcribes", parameters: [] },
          { name: "refund_order", description: "Refunds", parameters: [] }
        ]
      }))
      const server = yield* startFakeServer(fake.handler)
      const home = tempDir()
      const run = yield* runCli(["chat", "--server", server.url, "--agent", "support", "Where is my order?"], { home })
      assert.strictEqual(run.code, 1)
      assert.include(run.stderr, `agent "support" needs client tools this client does not implement: lookup_order, refund_order`)
      assert.deepStrictEqual(server.requests.map((r) => `${r.method} ${r.path}`), ["GET /api/agents/support"])
      const stored = path.join(home, "chat-store.json")
      assert.isFalse(
        fs.existsSync(stored) && fs.readFileSync(stored, "utf8").includes("Where is my order?"),
        "the refused message is not kept in the history"
      )
    }))

  it.effect("names the agent in the chat request when its tools are all implemented", () =>
    Effect.gen(function*() {
      const fake = agentsServer()
      fake.agents.set("plain", agentDefinitionOf("plain", { systemPrompt: "Be plain." }))
      const server = yield* startFakeServer((request) =>
        request.method === "POST"
          ? { json: { content: `agent=${JSON.parse(request.body.toString("utf8")).agent}`, toolCalls: [], messageId: "srv_1" } }
          : request.path.startsWith("/api/chats/")
          ? { status: 404, json: { error: "No such chat", code: "chat_not_found", chatId: "x" } }
          : fake.handler(request)
      )
      const run = yield* runCli(["chat", "--server", server.url, "--agent", "plain", "--no-wait", "Hi"])
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stdout, "agent=plain")
    }))
})
