import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { agentStoreName, makeAgentStore } from "../src/stores/AgentStore.ts"
import { chatStoreName, makeChatStore } from "../src/stores/ChatStore.ts"
import { fileStorage, memoryStorage, stateDirectory } from "../src/stores/StateStorage.ts"
import { tempDir } from "./support/Fakes.ts"

const context = {
  projectId: "proj_1",
  activeSceneId: "scene_2",
  mediaAssets: [{ id: "vid_1", name: "Clip", kind: "video" as const, uri: "file:///tmp/clip.mp4", durationMs: 1200 }],
  playbackTimeMs: 500
}

describe("chatStore", () => {
  it.effect("Message lifecycle", () =>
    Effect.sync(() => {
      const store = makeChatStore(memoryStorage())
      assert.deepStrictEqual(store.getState().messages, [])
      store.getState().addMessage({ role: "user", content: "Hello" })
      const { messages } = store.getState()
      assert.strictEqual(messages.length, 1)
      assert.strictEqual(messages[0]?.role, "user")
      assert.strictEqual(messages[0]?.content, "Hello")
      // the store fills what the minimal message leaves out
      assert.isTrue(typeof messages[0]?.id === "string" && messages[0].id.length > 0)
      assert.isTrue(typeof messages[0]?.timestamp === "number")
    }))

  it.effect("Error state persists until cleared", () =>
    Effect.sync(() => {
      const store = makeChatStore(memoryStorage())
      store.getState().setLoading(true)
      store.getState().setError("API failed")
      assert.strictEqual(store.getState().error, "API failed")
      assert.isFalse(store.getState().loading)
      // other updates do not clear it
      store.getState().addMessage({ role: "user", content: "again" })
      store.getState().setLoading(true)
      assert.strictEqual(store.getState().error, "API failed")
      store.getState().setError(null)
      assert.isNull(store.getState().error)
    }))

  it.effect("addMessage keeps a given id and timestamp", () =>
    Effect.sync(() => {
      const store = makeChatStore(memoryStorage())
      const stored = store.getState().addMessage({ id: "srv_1", role: "assistant", content: "Hi", timestamp: 42 })
      assert.deepStrictEqual(stored, { id: "srv_1", role: "assistant", content: "Hi", timestamp: 42 })
    }))

  it.effect("clearMessages empties the history and starts a new conversation", () =>
    Effect.sync(() => {
      const store = makeChatStore(memoryStorage())
      const first = store.getState().chatId
      store.getState().addMessage({ role: "user", content: "Hello" })
      store.getState().clearMessages()
      assert.deepStrictEqual(store.getState().messages, [])
      assert.notStrictEqual(store.getState().chatId, first)
      assert.match(store.getState().chatId, /^[A-Za-z0-9_.:-]{1,128}$/)
    }))
})

describe("agentStore", () => {
  it.effect("Tool execution tracking", () =>
    Effect.sync(() => {
      const store = makeAgentStore(memoryStorage())
      store.getState().setActiveTool("echo_context")
      store.getState().setStatus("processing")
      assert.strictEqual(store.getState().activeTool, "echo_context")
      assert.strictEqual(store.getState().status, "processing")
    }))

  it.effect("Reset after completion", () =>
    Effect.sync(() => {
      const store = makeAgentStore(memoryStorage())
      store.getState().setStatus("processing")
      store.getState().setActiveTool("echo_context")
      store.getState().setContext(context)
      store.getState().reset()
      assert.strictEqual(store.getState().status, "idle")
      assert.isNull(store.getState().activeTool)
      assert.deepStrictEqual(store.getState().context, context)
    }))
})

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
