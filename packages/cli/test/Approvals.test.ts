/**
 * `switchboard chat` and a server tool that needs approval: the CLI asks
 * `Allow shop__refund {"order":42}? [y/N]` and the next line answers — `y`
 * runs the tool (once) and prints the model's answer, `n <reason>` denies it
 * with the reason the model reads. The real server in process, a fake model
 * and a fake MCP server of the server's tests.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ProviderChatParams, ProviderChatResponse } from "@switchboard/domain"
import { Effect } from "effect"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { baseUrl, layerTestServer, requestAt, startFakeMcp, textTool } from "@switchboard/server/testing"
import { tempDir } from "@switchboard/client/testing"
import { runCli } from "./support/RunCli.ts"

const ADMIN_TOKEN = "admin-token-for-cli-approvals"

const model = (params: ProviderChatParams): ProviderChatResponse => {
  const last = params.messages.at(-1)!
  if (last.role === "tool") return { content: last.toolResult?.error === undefined ? `tool said: ${last.content}` : `error: ${last.toolResult.error}` }
  const match = /^refund (\d+)$/.exec(last.content)
  return match === null
    ? { content: `you said: ${last.content}` }
    : { content: "", toolCalls: [{ id: `call_${params.messages.length}`, name: "shop__refund", args: { order: Number(match[1]) } }] }
}

describe("switchboard chat asks before a tool that needs approval", () => {
  const fake = makeFakeProvider()
  fake.answerWith((params) => Effect.succeed(model(params)))
  layer(layerTestServer(fake.layer, { ADMIN_TOKEN }), { excludeTestServices: true, timeout: 60_000 })("against the server", (it) => {
    it.effect("y runs it once; n with a reason denies it", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const mcp = yield* startFakeMcp([textTool("refund", (args) => `refunded order ${String(args["order"])}`)])
        const put = yield* requestAt(server, "/admin/agents/shop", {
          method: "PUT",
          headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
          body: JSON.stringify({ systemPrompt: "shop", mcpServers: [{ name: "shop", url: mcp.url, requireApproval: true }] })
        })
        assert.strictEqual(put.status, 200, put.text)

        const yes = yield* runCli(["chat", "--server", server, "--agent", "shop", "refund 42"], { home: tempDir(), input: "y\n" })
        assert.strictEqual(yes.code, 0, yes.stderr)
        assert.include(yes.stderr, `Allow shop__refund {"order":42}? [y/N]`)
        assert.include(yes.stdout, "tool said: refunded order 42")
        assert.strictEqual(mcp.calls.filter((c) => c.name === "refund").length, 1)

        // Interactive: the line after the question answers it; the next one is a message again.
        const no = yield* runCli(["chat", "--server", server, "--agent", "shop"], { home: tempDir(), input: "refund 7\nn too large\nthanks\n" })
        assert.strictEqual(no.code, 0, no.stderr)
        assert.include(no.stderr, `Allow shop__refund {"order":7}? [y/N]`)
        assert.include(no.stdout, "error: denied by the user: too large")
        assert.include(no.stdout, "you said: thanks")
        assert.strictEqual(mcp.calls.filter((c) => c.name === "refund").length, 1, "a denied call never runs")
      }))
  })
})
