/**
 * An approval across a killed replica, with real processes: two servers (the production build)
 * on one PostgreSQL, their model a local OpenAI-compatible fake and their MCP server a fake in this
 * test process whose `refund` never answers the first time. The decision is posted to one replica,
 * which starts the tool and is SIGKILLed while the tool runs (no finalizer: its lease is left to
 * expire). The other replica's sweep takes the decision over and never runs the tool again: the
 * model reads that the run was interrupted, the chat goes on, the tool ran once.
 *
 * Only on PostgreSQL: the embedded database belongs to one process (its DATA_DIR lock).
 */
import { assert, describe, it } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Effect } from "effect"
import { FakeOpenAi } from "@switchboard/providers/testing"
import { startFakeMcp } from "../support/FakeMcp.ts"
import { eventually } from "../support/JobsHelpers.ts"
import { startServerPair } from "../support/ServerProcess.ts"
import { backend, makeTestDatabase } from "../support/TestDatabase.ts"
import { postJsonAt, requestAt } from "../support/TestServer.ts"

const ADMIN_TOKEN = "admin-token-for-killed-approvals"

describe("an approval's continuation across a killed replica", () => {
  it.live.skipIf(backend !== "postgres")(
    "SIGKILL while the approved tool runs: the other replica finishes the chat without running it again",
    () =>
      Effect.gen(function*() {
        const db = yield* makeTestDatabase
        const fake = yield* FakeOpenAi.scoped()
        fake.respondWith((request) => {
          const messages = (request.body as { messages: Array<{ role: string; content: string | null }> }).messages
          const last = messages.at(-1)!
          if (last.role === "tool") return FakeOpenAi.reply.text(`after the tool: ${last.content}`)
          return FakeOpenAi.reply.toolCalls([{ id: "call_refund_1", name: "shop__refund", arguments: JSON.stringify({ order: 5 }) }])
        })
        let runs = 0
        const mcp = yield* startFakeMcp([{
          name: "refund",
          // The first run never answers (its replica dies under it); any other would answer at once.
          run: (_args, signal) =>
            ++runs === 1
              ? new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))))
              : Promise.resolve({ content: [{ type: "text", text: "refunded again" }] })
        }])
        const replicas = yield* startServerPair({
          DATABASE_URL: db.url!,
          LLM_PROVIDER: "openai-compatible",
          LLM_MODEL: "shop-model",
          LLM_API_KEY: "sk-kill-approval",
          LLM_BASE_URL: fake.url,
          // The continuation's lease is two markers: 2 × (2 s + 1 s).
          LLM_TIMEOUT_MS: "2000",
          TURN_MARKER_GRACE_MS: "1000",
          MCP_TIMEOUT_MS: "60000",
          ADMIN_TOKEN,
          LOG_LEVEL: "info"
        })
        const [a, b] = replicas
        const put = yield* requestAt(a.url, "/admin/agents/shop", {
          method: "PUT",
          headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
          body: JSON.stringify({ systemPrompt: "shop", mcpServers: [{ name: "shop", url: mcp.url, requireApproval: true }] })
        })
        assert.strictEqual(put.status, 200, put.text)
        const turn = yield* postJsonAt(a.url, "/api/agent/chat", {
          agent: "shop",
          chatId: "kill-approval",
          messages: [{ id: "u1", role: "user", content: "refund order 5", timestamp: 1 }]
        })
        assert.strictEqual(turn.status, 200, turn.text)
        const { approvalId } = turn.json.pendingApprovals[0]

        const decided = yield* requestAt(a.url, `/api/chats/kill-approval/approvals/${approvalId}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ approved: true })
        })
        assert.strictEqual(decided.status, 202, decided.text)
        // A runs the tool (it hangs), then dies.
        yield* eventually(Effect.sync(() => runs), (n) => n === 1, "the tool to start on the deciding replica")
        a.child.kill("SIGKILL")
        yield* Effect.promise(() => a.exited)

        const transcript = yield* eventually(
          requestAt(b.url, "/api/chats/kill-approval/messages").pipe(Effect.map((r) => r.json.messages as Array<ChatMessage>)),
          (m) => m.at(-1)?.role === "assistant" && m.length >= 4,
          "the other replica to finish the chat",
          30_000
        )
        const answer = transcript.find((m) => m.id === `approval_${approvalId}`)
        assert.match(answer?.toolResult?.error ?? "", /interrupted/)
        assert.match(transcript.at(-1)!.content, /^after the tool: .*interrupted/)
        assert.strictEqual(runs, 1, "never run again")
        const again = yield* postJsonAt(b.url, "/api/agent/chat", {
          agent: "shop",
          chatId: "kill-approval",
          messages: [{ id: "u2", role: "user", content: "thanks", timestamp: 2 }]
        })
        assert.strictEqual(again.status, 200, "the chat is not wedged")
      }).pipe(Effect.scoped),
    90_000
  )
})
