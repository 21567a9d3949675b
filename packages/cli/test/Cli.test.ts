/**
 * The `switchboard` executable, run as a user would: the project's Node 22
 * on `bin/switchboard.js`, a fake API on a local port, a temporary
 * SWITCHBOARD_HOME.
 */
import type { AgentContext, ChatMessage, ChatRequest } from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { chatStoreName } from "@switchboard/client"
import { gate, startFakeServer, streamedReply, tempDir, turnChunks, until } from "@switchboard/client/testing"
import type { RecordedRequest } from "@switchboard/client/testing"
import { runCli, spawnCli } from "./support/RunCli.ts"
import { SSE_DONE, sseEvent } from "@switchboard/domain"

/** A fake model: asks for transcribe_video when there is a video, answers with what the tool returned. */
const fakeApi = (request: RecordedRequest) => {
  if (request.path === "/api/media/transcriptions") return { json: { text: "hello world" } }
  // The catch-up re-sync of a continued conversation: this stand-in keeps no transcript.
  if (request.method === "GET") return { status: 404, json: { error: "No such chat", code: "chat_not_found", chatId: "x" } }
  const body = JSON.parse(request.body.toString("utf8")) as ChatRequest
  const last = body.messages.at(-1)
  const n = body.messages.length
  if (last?.role === "tool") {
    const result = last.toolResult?.result as { text?: string } | undefined
    return { json: { content: `Transcript says: ${result?.text ?? last.toolResult?.error}`, messageId: `srv_${n}` } }
  }
  if ((body.context as AgentContext | undefined)?.mediaAssets.some((a) => a.kind === "video") && last?.content.includes("transcribe")) {
    return {
      json: {
        content: "",
        toolCalls: [{ id: `call_${n}`, name: "transcribe_video", args: {} }],
        messageId: `srv_${n}`
      }
    }
  }
  return { json: { content: `echo: ${last?.content}`, messageId: `srv_${n}` } }
}

const chatRequests = (requests: ReadonlyArray<RecordedRequest>) =>
  requests.filter((r) => r.path === "/api/agent/chat").map((r) => JSON.parse(r.body.toString("utf8")) as ChatRequest)

const storedMessages = (home: string): ReadonlyArray<ChatMessage> =>
  (JSON.parse(fs.readFileSync(path.join(home, `${chatStoreName}.json`), "utf8")) as {
    state: { messages: ReadonlyArray<ChatMessage> }
  }).state.messages

const writeContext = (dir: string) => {
  const clip = path.join(dir, "clip.mp4")
  fs.writeFileSync(clip, Uint8Array.from([1, 2, 3, 4]))
  const file = path.join(dir, "context.json")
  fs.writeFileSync(
    file,
    JSON.stringify({
      projectId: "proj_1",
      activeSceneId: null,
      mediaAssets: [{ id: "vid_1", name: "Clip", kind: "video", uri: clip }],
      playbackTimeMs: 0
    })
  )
  return file
}

describe("switchboard CLI", () => {
  it.effect("--help lists chat and serve; chat --help lists its flags", () =>
    Effect.gen(function*() {
      const top = yield* runCli(["--help"])
      assert.strictEqual(top.code, 0)
      assert.match(top.stdout, /SUBCOMMANDS[\s\S]*\bchat\b[\s\S]*\bserve\b/)

      const chat = yield* runCli(["chat", "--help"])
      assert.strictEqual(chat.code, 0)
      for (const flag of ["--server", "--token", "--context", "--new", "--no-stream"]) assert.include(chat.stdout, flag)

      const serve = yield* runCli(["serve", "--help"])
      assert.strictEqual(serve.code, 0)
      assert.include(serve.stdout, "switchboard serve")
    }))

  it.effect("chat runs the tool loop, prints the answer, and continues the conversation on the next run", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(fakeApi)
      const home = tempDir()
      const contextFile = writeContext(tempDir())

      const first = yield* runCli(["chat", "--server", server.url, "--context", contextFile, "please transcribe"], { home })
      assert.strictEqual(first.code, 0, first.stderr)
      assert.strictEqual(first.stdout, "Transcript says: hello world\n")
      assert.include(first.stderr, "running tool transcribe_video")
      assert.deepStrictEqual(storedMessages(home).map((m) => m.role), ["user", "assistant", "tool", "assistant"])
      // the file was really uploaded
      assert.isTrue(server.requests.some((r) => r.path === "/api/media/transcriptions" && r.body.includes(Buffer.from([1, 2, 3, 4]))))

      // history and context persist: the next run sends the whole conversation under the same chatId
      const second = yield* runCli(["chat", "--server", server.url, "thanks"], { home })
      assert.strictEqual(second.code, 0, second.stderr)
      assert.strictEqual(second.stdout, "echo: thanks\n")
      const requests = chatRequests(server.requests)
      const last = requests.at(-1)!
      assert.strictEqual(last.messages.length, 5)
      assert.strictEqual(last.chatId, requests[0]?.chatId)
      assert.strictEqual(last.context?.projectId, "proj_1")

      // --new starts over with a new chatId
      const fresh = yield* runCli(["chat", "--server", server.url, "--new", "hi"], { home })
      assert.strictEqual(fresh.code, 0, fresh.stderr)
      const newest = chatRequests(server.requests).at(-1)!
      assert.strictEqual(newest.messages.length, 1)
      assert.notStrictEqual(newest.chatId, requests[0]?.chatId)
    }))

  it.effect("without a message, chat runs one turn per line of stdin (with --no-stream, each answer whole)", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(fakeApi)
      const run = yield* runCli(["chat", "--server", server.url, "--no-stream"], { input: "first\n\nsecond\n" })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.strictEqual(run.stdout, "echo: first\necho: second\n")
      assert.strictEqual(chatRequests(server.requests).length, 2)
      const chats = server.requests.filter((r) => r.path === "/api/agent/chat")
      assert.isTrue(chats.every((r) => r.headers.accept === "application/json"))
    }))

  it.effect("--no-stream prints a tool round's text when its answer arrives, before its tool runs", () =>
    Effect.gen(function*() {
      // The model says something before it asks for the tool, as the scripted demo does.
      const server = yield* startFakeServer((request) => {
        const answer = fakeApi(request) as { json?: { toolCalls?: unknown } }
        return answer.json?.toolCalls === undefined ? answer : { json: { ...answer.json, content: "Let me listen." } }
      })
      const contextFile = writeContext(tempDir())
      const run = yield* runCli(["chat", "--server", server.url, "--no-stream", "--context", contextFile, "please transcribe"], {
        home: tempDir()
      })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.strictEqual(run.stdout, "Let me listen.\nTranscript says: hello world\n")
      // The round was `responding` when its text came, then ran its tool: the status lines a streamed turn prints.
      const lines = run.stderr.split("\n").filter((line) => line.startsWith("[switchboard]"))
      assert.deepStrictEqual(lines, [
        "[switchboard] sending to the model…",
        "[switchboard] responding…",
        "[switchboard] running tool transcribe_video…",
        "[switchboard] sending to the model…",
        "[switchboard] responding…"
      ])
    }))

  it.effect("an invalid context file is refused with a clear message", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(fakeApi)
      const file = path.join(tempDir(), "bad.json")
      fs.writeFileSync(file, JSON.stringify({ projectId: "p", activeSceneId: null, mediaAssets: [{ id: "a" }] }))
      const run = yield* runCli(["chat", "--server", server.url, "--context", file, "hi"])
      assert.strictEqual(run.code, 1)
      assert.include(run.stderr, `Invalid context file ${file}`)
      assert.include(run.stderr, "mediaAssets")
      assert.strictEqual(server.requests.length, 0)

      const missing = yield* runCli(["chat", "--server", server.url, "--context", "/no/such/file.json", "hi"])
      assert.strictEqual(missing.code, 1)
      assert.include(missing.stderr, "Cannot read context file /no/such/file.json")
    }))

  it.effect("an unreachable server: the error on stderr, exit code 1", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const probe = net.createServer().listen(0, "127.0.0.1", () => {
            const { port } = probe.address() as net.AddressInfo
            probe.close(() => resolve(port))
          })
        })
      )
      const home = tempDir()
      const run = yield* runCli(["chat", "--server", `http://127.0.0.1:${port}`, "hi"], { home })
      assert.strictEqual(run.code, 1)
      assert.strictEqual(run.stdout, "")
      assert.include(run.stderr, "cannot reach the server")
      // the user's message is kept for the next attempt
      assert.deepStrictEqual(storedMessages(home).map((m) => m.content), ["hi"])
    }))

  it.effect("a provider failure is printed with its reason", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer((request) =>
        request.path === "/api/agent/chat"
          ? { status: 502, json: { error: "LLM provider error", code: "provider_error", reason: "status_401" } }
          : fakeApi(request)
      )
      const run = yield* runCli(["chat", "--server", server.url, "hi"], { home: tempDir() })
      assert.strictEqual(run.code, 1)
      assert.include(run.stderr, "LLM provider error (provider_error: status_401)")
    }))

  it.effect("a busy server (503 overloaded) is printed as busy with its wait, not as a failure of the model; exit code 1", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer((request) =>
        request.path === "/api/agent/chat"
          ? {
            status: 503,
            json: { error: "Too many turns in flight on this replica (MAX_CONCURRENT_TURNS)", code: "overloaded", retryAfter: 3 },
            headers: { "retry-after": "3" }
          }
          : fakeApi(request)
      )
      for (const flags of [[], ["--no-stream"]]) {
        const home = tempDir()
        const run = yield* runCli(["chat", "--server", server.url, ...flags, "hi"], { home })
        assert.strictEqual(run.code, 1)
        assert.strictEqual(run.stdout, "")
        assert.include(run.stderr, "switchboard: Switchboard is busy (too many turns at once); retry in 3 s\n")
        assert.notInclude(run.stderr, "provider")
        // Refused, not retried: one request; the user's message is kept for the next attempt.
        assert.deepStrictEqual(storedMessages(home).map((m) => m.content), ["hi"])
      }
      assert.strictEqual(chatRequests(server.requests).length, 2)
    }))

  it.effect("chat prints the answer as it streams, each round's text on its own line", () =>
    Effect.gen(function*() {
      const shown = gate()
      const server = yield* startFakeServer((request) => {
        if (request.path !== "/api/agent/chat") return fakeApi(request)
        const body = JSON.parse(request.body.toString("utf8")) as ChatRequest
        if (body.messages.at(-1)?.role !== "tool") {
          return streamedReply(turnChunks({
            messageId: "srv_1",
            deltas: ["Let me ", "listen."],
            toolCalls: [{ id: "call_1", name: "transcribe_video", args: {} }]
          }))
        }
        // The answer's first words, then nothing until the terminal shows them.
        return {
          events: (async function*() {
            yield sseEvent({ type: "start", messageId: "srv_2" })
            yield sseEvent({ type: "text-delta", id: "t", delta: "Transcript " })
            await shown.opened
            yield sseEvent({ type: "text-delta", id: "t", delta: "says: hello world" })
            yield sseEvent({ type: "finish" })
            yield SSE_DONE
          })()
        }
      })
      const home = tempDir()
      const cli = spawnCli(["chat", "--server", server.url, "--context", writeContext(tempDir()), "please transcribe"], { home })
      yield* Effect.promise(() => until(() => cli.stdout().includes("Transcript ")))
      assert.strictEqual(cli.stdout(), "Let me listen.\nTranscript ")
      shown.open()
      const run = yield* Effect.promise(() => cli.exited)
      assert.strictEqual(run.code, 0, run.stderr)
      assert.strictEqual(run.stdout, "Let me listen.\nTranscript says: hello world\n")
      assert.deepStrictEqual(storedMessages(home).map((m) => [m.role, m.role === "assistant" ? m.content : ""]), [
        ["user", ""],
        ["assistant", "Let me listen."],
        ["tool", ""],
        ["assistant", "Transcript says: hello world"]
      ])
      assert.strictEqual(chatRequests(server.requests).length, 2)
      assert.isTrue(server.requests.filter((r) => r.path === "/api/agent/chat").every((r) => r.headers.accept === "text/event-stream"))
    }))

  it.effect("Ctrl+C during a turn stops it once and prints what the server kept", () =>
    Effect.gen(function*() {
      const stopped = gate()
      const server = yield* startFakeServer((request) => {
        if (request.path.endsWith("/stop")) {
          stopped.open()
          return { json: { stopped: true } }
        }
        if (request.path !== "/api/agent/chat") return fakeApi(request)
        return {
          events: (async function*() {
            yield sseEvent({ type: "start", messageId: "srv_1" })
            yield sseEvent({ type: "text-delta", id: "t", delta: "Half an" })
            await stopped.opened
            yield sseEvent({ type: "finish", messageMetadata: { stopped: true } })
            yield SSE_DONE
          })()
        }
      })
      const home = tempDir()
      const cli = spawnCli(["chat", "--server", server.url, "tell me everything"], { home })
      yield* Effect.promise(() => until(() => cli.stdout().includes("Half an")))
      cli.child.kill("SIGINT")
      const run = yield* Effect.promise(() => cli.exited)
      assert.strictEqual(run.code, 0, run.stderr)
      assert.strictEqual(run.stdout, "Half an\n")
      assert.include(run.stderr, "the turn was stopped")
      const chatId = chatRequests(server.requests)[0]?.chatId
      assert.deepStrictEqual(server.requests.filter((r) => r.path.endsWith("/stop")).map((r) => r.path), [`/api/chats/${chatId}/stop`])
      const last = storedMessages(home).at(-1)
      assert.deepStrictEqual([last?.id, last?.content, last?.metadata], ["srv_1", "Half an", { stopped: true }])
    }))

  it.effect("a second Ctrl+C quits when the stopped turn does not end; stop was asked once", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer((request) => {
        if (request.path.endsWith("/stop")) return { json: { stopped: true } }
        if (request.path !== "/api/agent/chat") return fakeApi(request)
        return {
          events: (async function*() {
            yield sseEvent({ type: "start", messageId: "srv_1" })
            yield sseEvent({ type: "text-delta", id: "t", delta: "Hel" })
            await new Promise(() => {}) // a server that never ends the turn
          })()
        }
      })
      const home = tempDir()
      const cli = spawnCli(["chat", "--server", server.url, "hi"], { home })
      const stops = () => server.requests.filter((r) => r.path.endsWith("/stop")).length
      yield* Effect.promise(() => until(() => cli.stdout().includes("Hel")))
      cli.child.kill("SIGINT")
      yield* Effect.promise(() => until(() => stops() === 1 && cli.stderr().includes("Ctrl+C again")))
      cli.child.kill("SIGINT")
      const run = yield* Effect.promise(() => cli.exited)
      assert.isTrue(run.code !== null || run.signal !== null)
      assert.strictEqual(stops(), 1)
      // What had arrived is kept, marked stopped, as the server keeps it.
      const last = storedMessages(home).at(-1)
      assert.deepStrictEqual([last?.id, last?.content, last?.metadata], ["srv_1", "Hel", { stopped: true }])
    }))
})
