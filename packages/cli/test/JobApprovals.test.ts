/**
 * `switchboard chat` and a sub-agent job parked on a call that needs approval
 * (docs/subagents.md, "Approvals inside a job"): while it follows the chat's
 * jobs, the CLI asks `Allow shop__refund {"order":1} (job refund-run …)? [y/N]`
 * once, as it asks a turn's, and the next line answers — `y` runs the tool
 * (once) and the job's result prints, `n <reason>` denies it and the result
 * shows the denial; a decision taken elsewhere first is said, not failed; and
 * in a conversation on stdin the line after the question answers it. The real
 * server in process, a fake model and the server tests' fake MCP server.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ProviderChatParams, ProviderChatResponse } from "@switchboard/domain"
import { subagentResultOf } from "@switchboard/domain"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { baseUrl, layerTestServer, requestAt, startFakeMcp, textTool } from "@switchboard/server/testing"
import { tempDir } from "@switchboard/client/testing"
import { runCli, spawnCli } from "./support/RunCli.ts"
import type { SpawnedCli } from "./support/RunCli.ts"

const ADMIN_TOKEN = "admin-token-for-cli-job-approvals"
const SUBAGENT = "You refund orders."

/**
 * The chat model: "refund N" dispatches refund-run. The sub-agent: calls shop__refund for the
 * order of its input, then submits what the call answered (its error: why it did not run).
 */
const model = (params: ProviderChatParams): ProviderChatResponse => {
  const last = params.messages.at(-1)!
  if (params.systemPrompt?.startsWith(SUBAGENT) === true) {
    const order = Number(/Order (\d+)/.exec(params.systemPrompt)?.[1])
    if (last.role !== "tool") return { content: "", toolCalls: [{ id: `s_${order}`, name: "shop__refund", args: { order } }] }
    const outcome = last.toolResult?.error ?? JSON.stringify(last.toolResult?.result)
    return { content: "", toolCalls: [{ id: `s_${order}_done`, name: "submit_result", args: { outcome } }] }
  }
  if (last.role === "tool") return { content: "working on it" }
  if (last.role === "user" && subagentResultOf(last) !== undefined) return { content: "reported" }
  const match = /^refund (\d+)$/.exec(last.content)
  return match === null
    ? { content: `you said: ${last.content}` }
    : { content: "", toolCalls: [{ id: `c_${match[1]}`, name: "refund-run", args: { order: Number(match[1]) } }] }
}

const question = (order: number) => new RegExp(`Allow shop__refund \\{"order":${order}\\} \\(job refund-run [0-9A-Za-z_-]{1,8}\\)\\? \\[y/N\\] `, "g")

/** Waits until the running CLI's output says so (or it ended). */
const until = (cli: SpawnedCli, ready: () => boolean, what: string) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 45_000
    while (!ready()) {
      if (cli.child.exitCode !== null || Date.now() > deadline) {
        return yield* Effect.die(new Error(`waiting for ${what}:\n${cli.stderr()}\n${cli.stdout()}`))
      }
      yield* Effect.sleep("50 millis")
    }
  })

/** The chat id the CLI keeps in its state directory. */
const chatIdIn = (home: string): string =>
  (JSON.parse(fs.readFileSync(path.join(home, "chat-store.json"), "utf8")) as { state: { chatId: string } }).state.chatId

describe("switchboard chat asks before a parked job's call", () => {
  const fake = makeFakeProvider()
  fake.answerWith((params) => Effect.succeed(model(params)))
  layer(layerTestServer(fake.layer, { ADMIN_TOKEN }), { excludeTestServices: true, timeout: 180_000 })("against the server", (it) => {
    it.effect("y runs it once and the result prints; n with a reason denies it; decided elsewhere; on stdin", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const mcp = yield* startFakeMcp([textTool("refund", (args) => `refunded order ${String(args["order"])}`)])
        const refunds = () => mcp.calls.filter((c) => c.name === "refund").length
        const put = (route: string, body: unknown) =>
          requestAt(server, route, {
            method: "PUT",
            headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
            body: JSON.stringify(body)
          }).pipe(Effect.map((res) => assert.strictEqual(res.status, 200, res.text)))
        yield* put("/admin/subagents/refund-run", {
          description: "Refund an order in the background, once the user allows it.",
          input: [{ key: "order", type: "integer", required: true }],
          systemPrompt: `${SUBAGENT} Order {{input.order}}.`,
          mcpServers: [{ name: "shop", url: mcp.url, requireApproval: ["refund"] }],
          result: { type: "object", properties: { outcome: { type: "string" } }, required: ["outcome"] }
        })
        yield* put("/admin/agents/shop", { systemPrompt: "Shop back office.", jobKinds: ["refund-run"] })
        const chat = (args: ReadonlyArray<string>) => ["chat", "--server", server, "--agent", "shop", ...args]

        // y: asked once, the tool runs once, the job's result and the wake answer print.
        const yes = yield* runCli(chat(["refund 1"]), { home: tempDir(), input: "y\n" })
        assert.strictEqual(yes.code, 0, yes.stderr)
        assert.strictEqual(yes.stderr.match(question(1))?.length, 1, yes.stderr)
        assert.match(yes.stderr, /\[refund-run \S+\] waiting for approval: shop__refund\n/)
        assert.match(yes.stderr, /\? \[y\/N\] y\n/, "an answer from a pipe is shown after its question")
        assert.include(yes.stdout, "working on it")
        assert.match(yes.stdout, /── refund-run result \[refund-run \S+\] ──\noutcome: "refunded order 1"\n/)
        assert.include(yes.stdout, "reported")
        assert.strictEqual(refunds(), 1)

        // n with a reason: denied, the sub-agent reads why, the tool never runs.
        const no = yield* runCli(chat(["refund 2"]), { home: tempDir(), input: "n too large\n" })
        assert.strictEqual(no.code, 0, no.stderr)
        assert.strictEqual(no.stderr.match(question(2))?.length, 1, no.stderr)
        assert.match(no.stdout, /── refund-run result \[refund-run \S+\] ──\noutcome: denied by the user: too large\n/)
        assert.strictEqual(refunds(), 1, "a denied call never runs")

        // Decided elsewhere (the console) while the question waits: the CLI's answer meets a 409, which
        // it says, and it follows the job to its result.
        const home = tempDir()
        const elsewhere = spawnCli(chat(["refund 3"]), { home, keepStdinOpen: true })
        yield* until(elsewhere, () => question(3).test(elsewhere.stderr()), "the question of order 3")
        const chatId = chatIdIn(home)
        const jobs = yield* requestAt(server, `/api/jobs?chatId=${chatId}`)
        const approvalId = (jobs.json.jobs as ReadonlyArray<{ waitingFor?: { approvalId: string } }>)[0]?.waitingFor?.approvalId
        assert.isDefined(approvalId, jobs.text)
        const decided = yield* requestAt(server, `/api/chats/${chatId}/approvals/${approvalId}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ approved: true })
        })
        assert.strictEqual(decided.status, 202, decided.text)
        elsewhere.child.stdin.end("n\n")
        const late = yield* Effect.promise(() => elsewhere.exited)
        assert.strictEqual(late.code, 0, late.stderr)
        assert.match(late.stderr, /\[refund-run \S+\] shop__refund was already decided elsewhere; following the job\n/)
        assert.match(late.stdout, /outcome: "refunded order 3"\n/)
        assert.strictEqual(refunds(), 2)

        // A conversation on stdin: the line after the question answers it; the next is a message again.
        const talk = spawnCli(chat([]), { home: tempDir(), keepStdinOpen: true, input: "refund 4\n" })
        yield* until(talk, () => question(4).test(talk.stderr()), "the question of order 4")
        talk.child.stdin.write("yes\n")
        yield* until(talk, () => talk.stdout().includes(`outcome: "refunded order 4"`), "the result of order 4")
        talk.child.stdin.end("thanks\n")
        const talked = yield* Effect.promise(() => talk.exited)
        assert.strictEqual(talked.code, 0, talked.stderr)
        assert.strictEqual(talked.stderr.match(question(4))?.length, 1, talked.stderr)
        assert.include(talked.stdout, "you said: thanks")
        assert.strictEqual(refunds(), 3)
      }))
  })
})
