import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { agentStoreName, makeAgentStore } from "../src/stores/AgentStore.ts"
import { chatStoreName, makeChatStore } from "../src/stores/ChatStore.ts"
import { memoryStorage, webStorage } from "../src/stores/StateStorage.ts"

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

  it.effect("a streaming message grows in place, is not persisted (nor written) until final, then is persisted once", () =>
    Effect.sync(() => {
      const storage = memoryStorage()
      let writes = 0
      const counting = { ...storage, setItem: (name: string, value: string) => (writes++, storage.setItem(name, value)) }
      const store = makeChatStore(counting)
      store.getState().addMessage({ id: "u1", role: "user", content: "Hi", timestamp: 1 })
      const persistedIds = () =>
        (JSON.parse(storage.items.get(chatStoreName) ?? "{}") as { state: { messages: Array<{ id: string }> } }).state.messages
          .map((m) => m.id)

      store.getState().startStreaming({ id: "srv_1", role: "assistant", content: "", timestamp: 2 })
      const afterStart = writes
      for (const text of ["He", "Hello", "Hello there"]) store.getState().setStreamingContent(text)
      store.getState().setLoading(false)
      assert.strictEqual(writes, afterStart, "a delta writes nothing")
      assert.strictEqual(store.getState().streamingId, "srv_1")
      assert.deepStrictEqual(store.getState().messages.map((m) => m.content), ["Hi", "Hello there"])
      assert.deepStrictEqual(persistedIds(), ["u1"])

      store.getState().finishStreaming({ id: "srv_1", role: "assistant", content: "Hello there!", timestamp: 2 })
      assert.isNull(store.getState().streamingId)
      assert.deepStrictEqual(store.getState().messages.map((m) => m.content), ["Hi", "Hello there!"])
      assert.deepStrictEqual(persistedIds(), ["u1", "srv_1"])
      assert.strictEqual(writes, afterStart + 1)

      // A stream that failed leaves nothing behind.
      store.getState().startStreaming({ id: "srv_2", role: "assistant", content: "Par" })
      store.getState().finishStreaming(null)
      assert.deepStrictEqual(store.getState().messages.map((m) => m.id), ["u1", "srv_1"])
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

describe("web storage", () => {
  it.effect("stores persist under a prefix in a Web Storage and come back from it", () =>
    Effect.sync(() => {
      const items = new Map<string, string>()
      const storage = {
        getItem: (key: string) => items.get(key) ?? null,
        setItem: (key: string, value: string) => void items.set(key, value),
        removeItem: (key: string) => void items.delete(key)
      }
      const chat1 = makeChatStore(webStorage(storage))
      const agent1 = makeAgentStore(webStorage(storage))
      chat1.getState().addMessage({ role: "user", content: "Hello" })
      agent1.getState().setContext(context)
      assert.deepStrictEqual([...items.keys()].sort(), [`switchboard:${agentStoreName}`, `switchboard:${chatStoreName}`].sort())

      const chat2 = makeChatStore(webStorage(storage))
      const agent2 = makeAgentStore(webStorage(storage))
      assert.deepStrictEqual(chat2.getState().messages, chat1.getState().messages)
      assert.strictEqual(chat2.getState().chatId, chat1.getState().chatId)
      assert.deepStrictEqual(agent2.getState().context, context)
    }))

  it.effect("a write the storage refuses (quota full) keeps the last copy that fitted and breaks nothing", () =>
    Effect.sync(() => {
      const items = new Map<string, string>()
      const quota = {
        getItem: (key: string) => items.get(key) ?? null,
        setItem: (key: string, value: string) => {
          if (value.length > 2_000) throw new DOMException("The quota has been exceeded.", "QuotaExceededError")
          items.set(key, value)
        },
        removeItem: (key: string) => void items.delete(key)
      }
      const refused: Array<string> = []
      const chat = makeChatStore(webStorage(quota, "switchboard:", (name) => refused.push(name)))
      chat.getState().addMessage({ role: "user", content: "Hello" })
      chat.getState().addMessage({ role: "user", content: "x".repeat(5_000) })
      assert.strictEqual(chat.getState().messages.length, 2)
      assert.deepStrictEqual(refused, [chatStoreName])

      // A reload finds the same conversation (its transcript re-synced from the server).
      const reloaded = makeChatStore(webStorage(quota))
      assert.strictEqual(reloaded.getState().chatId, chat.getState().chatId)
      assert.deepStrictEqual(reloaded.getState().messages.map((m) => m.content), ["Hello"])
    }))

  it("without a localStorage (Node), webStorage() says what to do instead", () => {
    assert.throws(() => webStorage(), /no localStorage; pass a storage/)
  })
})
