/**
 * The terminal's state files: the stores over `fileStorage` survive a restart, and a corrupt or
 * hand-edited file never yields a malformed history.
 */
import { assert, describe, it } from "@effect/vitest"
import { agentStoreName, chatStoreName, makeAgentStore, makeChatStore } from "@switchboard/client"
import { tempDir } from "@switchboard/client/testing"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileStorage, stateDirectory } from "../src/stores/FileStorage.ts"

const context = {
  projectId: "proj_1",
  activeSceneId: "scene_2",
  mediaAssets: [{ id: "vid_1", name: "Clip", kind: "video" as const, uri: "file:///tmp/clip.mp4", durationMs: 1200 }],
  playbackTimeMs: 500
}

describe("persistence", () => {
  it.effect("history, chat id and context survive re-creating the stores over the same directory", () =>
    Effect.sync(() => {
      const dir = tempDir()
      const chat1 = makeChatStore(fileStorage(dir))
      const agent1 = makeAgentStore(fileStorage(dir))
      chat1.getState().addMessage({ role: "user", content: "Hello" })
      chat1.getState().addMessage({ id: "srv_1", role: "assistant", content: "Hi!", timestamp: 7 })
      chat1.getState().setLoading(true)
      chat1.getState().setError("transient")
      chat1.getState().setLoading(true)
      agent1.getState().setContext(context)
      agent1.getState().setStatus("processing")
      agent1.getState().setActiveTool("transcribe_video")

      assert.isTrue(fs.existsSync(path.join(dir, `${chatStoreName}.json`)))
      assert.isTrue(fs.existsSync(path.join(dir, `${agentStoreName}.json`)))

      const chat2 = makeChatStore(fileStorage(dir))
      const agent2 = makeAgentStore(fileStorage(dir))
      assert.deepStrictEqual(chat2.getState().messages, chat1.getState().messages)
      assert.strictEqual(chat2.getState().chatId, chat1.getState().chatId)
      // only data is persisted: not the running process's flags
      assert.isFalse(chat2.getState().loading)
      assert.isNull(chat2.getState().error)
      assert.deepStrictEqual(agent2.getState().context, context)
      assert.strictEqual(agent2.getState().status, "idle")
      assert.isNull(agent2.getState().activeTool)
    }))

  it.effect("a corrupt or hand-edited file never yields a malformed history", () =>
    Effect.sync(() => {
      const dir = tempDir()
      fs.writeFileSync(path.join(dir, `${chatStoreName}.json`), "{ not json")
      const fresh = makeChatStore(fileStorage(dir))
      assert.deepStrictEqual(fresh.getState().messages, [])

      fs.writeFileSync(
        path.join(dir, `${chatStoreName}.json`),
        JSON.stringify({
          version: 1,
          state: {
            chatId: "bad id with spaces",
            messages: [
              { id: "m1", role: "user", content: "kept", timestamp: 1 },
              { id: "m2", role: "tool", content: "no toolResult", timestamp: 2 },
              { role: "user", content: "no id" }
            ]
          }
        })
      )
      const repaired = makeChatStore(fileStorage(dir))
      assert.deepStrictEqual(repaired.getState().messages.map((m) => m.id), ["m1"])
      assert.match(repaired.getState().chatId, /^chat_/)
    }))

  it.effect("the state directory is $SWITCHBOARD_HOME, else ~/.switchboard", () =>
    Effect.sync(() => {
      assert.strictEqual(stateDirectory({ SWITCHBOARD_HOME: "/tmp/sb-home" }), "/tmp/sb-home")
      assert.strictEqual(stateDirectory({}), path.join(os.homedir(), ".switchboard"))
    }))
})
