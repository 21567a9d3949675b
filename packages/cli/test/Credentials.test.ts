/**
 * `--token` and `--user` of `switchboard chat` and `switchboard jobs`, run
 * as a user would against a fake API that takes one token: they reach the
 * server on every request (the token from `CHAT_TOKEN` when no flag names
 * one), and a refused token is one line on stderr, exit code 1, no further
 * turn.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startFakeServer, tempDir } from "@switchboard/client/testing"
import type { RecordedRequest } from "@switchboard/client/testing"
import { runCli } from "./support/RunCli.ts"

const refusal = "Missing or invalid bearer token (a user's JWT or CHAT_TOKEN)"

/** Takes `Bearer good` only; answers a turn with an echo and a job listing with none. */
const api = (request: RecordedRequest) => {
  if (request.headers.authorization !== "Bearer good") return { status: 401, json: { error: refusal, code: "unauthenticated" } }
  if (request.path.startsWith("/api/jobs")) return { json: { jobs: [] } }
  return { json: { content: "hello", messageId: "srv_1" } }
}

/** The lines the CLI said of itself on stderr (not its status lines). */
const saidLines = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("switchboard:"))

describe("switchboard --token and --user", () => {
  it.effect("chat and jobs send --token as the bearer and --user as X-Switchboard-User; CHAT_TOKEN is the default", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(api)
      const home = tempDir()
      const chat = yield* runCli(["chat", "--server", server.url, "--no-stream", "--token", "good", "--user", "alice", "hi"], { home })
      assert.strictEqual(chat.code, 0, chat.stderr)
      assert.strictEqual(chat.stdout, "hello\n")
      const jobs = yield* runCli(["jobs", "--server", server.url, "--token", "good", "--user", "alice"], { home })
      assert.strictEqual(jobs.code, 0, jobs.stderr)
      const fromEnv = yield* runCli(["jobs", "--server", server.url], { home, env: { CHAT_TOKEN: "good" } })
      assert.strictEqual(fromEnv.code, 0, fromEnv.stderr)

      assert.deepStrictEqual(server.requests.map((r) => r.path.split("?")[0]), ["/api/agent/chat", "/api/jobs", "/api/jobs"])
      assert.isTrue(server.requests.every((r) => r.headers.authorization === "Bearer good"))
      assert.deepStrictEqual(server.requests.map((r) => r.headers["x-switchboard-user"]), ["alice", "alice", undefined])
    }))

  it.effect("a refused token is one line, exit code 1, and no further turn", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(api)
      const chat = yield* runCli(["chat", "--server", server.url, "--token", "expired"], {
        home: tempDir(),
        input: "first\nsecond\n"
      })
      assert.strictEqual(chat.code, 1)
      assert.strictEqual(chat.stdout, "")
      assert.deepStrictEqual(saidLines(chat.stderr), [`switchboard: the server refused the token: ${refusal} (unauthenticated)`])
      assert.notMatch(chat.stderr, /^\s+at /m)
      assert.strictEqual(server.requests.filter((r) => r.path === "/api/agent/chat").length, 1)

      const jobs = yield* runCli(["jobs", "--server", server.url, "--token", "expired"], { home: tempDir() })
      assert.strictEqual(jobs.code, 1)
      assert.deepStrictEqual(saidLines(jobs.stderr), [`switchboard: the server refused the token: ${refusal} (unauthenticated)`])

      const none = yield* runCli(["jobs", "--server", server.url], { home: tempDir() })
      assert.strictEqual(none.code, 1)
      assert.deepStrictEqual(saidLines(none.stderr), [
        `switchboard: the server wants a token (pass --token or set CHAT_TOKEN): ${refusal} (unauthenticated)`
      ])
    }))
})

describe("switchboard admin usage --user", () => {
  it.effect("asks for that user's calls (userId) and prints the rows", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(() => ({
        json: {
          rows: [{ key: "chat_1", calls: 2, inputTokens: 240, outputTokens: 60, cachedInputTokens: 0 }],
          from: "2026-12-05T01:00:00.000Z",
          to: "2026-12-06T01:00:00.000Z",
          groupBy: "chat",
          truncated: false
        }
      }))
      const usage = yield* runCli(["admin", "usage", "--server", server.url, "--group-by", "chat", "--user", "alice"], {
        home: tempDir(),
        env: { ADMIN_TOKEN: "admin" }
      })
      assert.strictEqual(usage.code, 0, usage.stderr)
      assert.match(usage.stdout, /chat_1 {2}2 calls {2}240 in/)
      const query = new URL(server.requests[0]!.path, server.url).searchParams
      assert.strictEqual(query.get("userId"), "alice")
      assert.strictEqual(query.get("groupBy"), "chat")
    }))
})
