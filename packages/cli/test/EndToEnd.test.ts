/**
 * `switchboard chat` against the real server: the server runs here on an
 * ephemeral port with the scripted demo provider and a test database; the CLI
 * runs as its own process. One turn goes tool call → transcribe_video (a real
 * multipart upload) → final answer, and the server keeps the same transcript
 * as the client.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ProviderConfig from "@switchboard/providers"
import { baseUrl, layerTestServer, request } from "@switchboard/server/testing"
import { chatStoreName } from "@switchboard/client"
import { tempDir } from "@switchboard/client/testing"
import { runCli } from "./support/RunCli.ts"

const script = path.resolve(import.meta.dirname, "../../../examples/scripted-demo.json")

describe("switchboard chat against the server", () => {
  layer(
    layerTestServer(ProviderConfig.layer, { LLM_PROVIDER: "scripted", LLM_MODEL: "demo", LLM_API_KEY: "unused", LLM_SCRIPT: script }),
    { excludeTestServices: true }
  )("scripted demo provider", (it) => {
    it.effect("completes a tool loop: tool call → transcribe_video → final answer", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const home = tempDir()
        const media = tempDir()
        const clip = path.join(media, "talk.mp4")
        fs.writeFileSync(clip, new Uint8Array(4096).fill(7))
        const contextFile = path.join(media, "context.json")
        fs.writeFileSync(contextFile, JSON.stringify({
          projectId: "e2e",
          activeSceneId: null,
          playbackTimeMs: 0,
          mediaAssets: [{ id: "talk", name: "Talk", kind: "video", uri: `file://${clip}` }]
        }))

        const run = yield* runCli(["chat", "--server", server, "--context", contextFile, "Please transcribe my video"], { home })
        assert.strictEqual(run.code, 0, run.stderr)
        assert.include(run.stdout, "Here is the transcription:")
        assert.include(run.stdout, "talk.mp4 (4096 bytes)", "the scripted transcriber saw the uploaded file")
        assert.include(run.stderr, "transcribe_video")

        const local = (JSON.parse(fs.readFileSync(path.join(home, `${chatStoreName}.json`), "utf8")) as {
          state: { chatId: string; messages: Array<ChatMessage> }
        }).state
        assert.deepStrictEqual(local.messages.map((m) => m.role), ["user", "assistant", "tool", "assistant"])

        // The final assistant message is persisted by the turn that produced it; the rest came write-ahead.
        const persisted = yield* request(`/api/chats/${local.chatId}/messages`)
        assert.strictEqual(persisted.status, 200)
        assert.deepStrictEqual(
          persisted.json.messages.map((m: ChatMessage) => m.id),
          local.messages.map((m) => m.id),
          "server and client agree on the transcript, without duplicates"
        )

        const next = yield* runCli(["chat", "--server", server, "thanks!"], { home })
        assert.strictEqual(next.code, 0, next.stderr)
        assert.include(next.stdout, "thanks!")
        const after = yield* request(`/api/chats/${local.chatId}/messages`)
        assert.strictEqual(after.json.messages.length, 6)
      }))
  })
})
