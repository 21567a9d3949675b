import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { ProviderNotConfigured, TranscribeVideo } from "@switchboard/domain"
import type { ProviderChatParams } from "@switchboard/domain"
import { toWireError } from "../src/ProviderWireError.ts"
import { eventsOf, ProviderAdapter, Transcriber } from "../src/ProviderAdapter.ts"
import type { ProviderStreamEvent } from "../src/ProviderAdapter.ts"
import * as Scripted from "../src/scripted/Scripted.ts"
import type { Script } from "../src/scripted/Scripted.ts"
import { assistant, message, params, toolMessage, user } from "./Messages.ts"
import { checkFinished } from "./StreamChecks.ts"

const demoScript = fileURLToPath(new URL("../../../examples/scripted-demo.json", import.meta.url))

const scratch = mkdtempSync(join(tmpdir(), "scripted-test-"))
const writeScript = (name: string, content: string) => {
  const path = join(scratch, name)
  writeFileSync(path, content)
  return path
}

const chat = (layer: ReturnType<typeof Scripted.layer>, chatParams: ProviderChatParams) =>
  ProviderAdapter.use((adapter) => adapter.chat(chatParams)).pipe(Effect.provide(layer))

const script: Script = {
  rules: [
    { when: { lastRole: "user", contains: "WEATHER" }, reply: { content: "Checking.", toolCalls: [{ name: "get_weather", args: { city: "{{lastUserMessage}}" } }] } },
    { when: { tool: "get_weather", toolError: true }, reply: { content: "Failed: {{lastToolResult}}" } },
    { when: { tool: "get_weather" }, reply: { content: "Weather: {{lastToolResult}}" } },
    { when: { lastRole: "tool" }, reply: { content: "Some other tool answered." } },
    { when: { lastRole: "user" }, reply: { content: "Echo: {{lastUserMessage}} / {{unknownPlaceholder}}" } }
  ],
  fallback: { content: "fallback" }
}

describe("Scripted: rules", () => {
  it("the first matching rule wins; contains is case-insensitive; placeholders fill content and args", () => {
    const response = Scripted.answer(script, params([user("hello"), assistant("hi"), user("What's the weather in Oslo?")]))
    assert.deepStrictEqual(response, {
      content: "Checking.",
      toolCalls: [{ id: "call_3_0", name: "get_weather", args: { city: "What's the weather in Oslo?" } }]
    })
  })

  it("matches on the tool whose result is last, and on whether it failed", () => {
    const base = [user("weather?"), assistant("", { toolCalls: [{ id: "call_1_0", name: "get_weather", args: {} }] })]
    assert.strictEqual(
      Scripted.answer(script, params([...base, toolMessage("call_1_0", "get_weather", { result: "sunny" })])).content,
      "Weather: sunny"
    )
    assert.strictEqual(
      Scripted.answer(script, params([...base, toolMessage("call_1_0", "get_weather", { result: { temp: 21 } })])).content,
      "Weather: {\"temp\":21}"
    )
    assert.strictEqual(
      Scripted.answer(script, params([...base, toolMessage("call_1_0", "get_weather", { result: { text: "cloudy" } })])).content,
      "Weather: cloudy",
      "a { text } result shows as its text"
    )
    assert.strictEqual(
      Scripted.answer(script, params([...base, toolMessage("call_1_0", "get_weather", { error: "no network" })])).content,
      "Failed: no network"
    )
    assert.strictEqual(
      Scripted.answer(script, params([...base, toolMessage("call_1_0", "other_tool", { result: 1 })])).content,
      "Some other tool answered."
    )
  })

  it("leaves unknown placeholders as they are and omits toolCalls when the reply has none", () => {
    assert.deepStrictEqual(Scripted.answer(script, params([user("hi")])), { content: "Echo: hi / {{unknownPlaceholder}}" })
  })

  it("uses the fallback, then a fixed sentence, when nothing matches", () => {
    assert.deepStrictEqual(Scripted.answer(script, params([assistant("alone")])), { content: "fallback" })
    assert.deepStrictEqual(Scripted.answer({}, params([user("x")])), { content: Scripted.DEFAULT_FALLBACK })
  })

  it("is a pure function of the conversation: same input, same answer, same ids", () => {
    const conversation = params([user("weather please")], [TranscribeVideo])
    const first = Scripted.answer(script, conversation)
    const again = Scripted.answer(script, params([user("weather please")], [TranscribeVideo]))
    assert.deepStrictEqual(first, again)
    // Ids derive from the conversation's length: a later turn gets new ones.
    const later = Scripted.answer(script, params([user("weather please"), assistant("?"), user("weather again")]))
    assert.strictEqual(later.toolCalls?.[0]?.id, "call_3_0")
  })

  it("reads a tool message's result when its content is empty, for contains", () => {
    const rules: Script = { rules: [{ when: { contains: "SUNNY" }, reply: { content: "found" } }] }
    assert.strictEqual(Scripted.answer(rules, params([toolMessage("c", "t", { result: "sunny" })])).content, "found")
  })

  it("transcribes with the script's text, or a sentence derived from the upload", () => {
    const input = { data: new Uint8Array(42), fileName: "clip.mp4", mediaType: "video/mp4" }
    assert.strictEqual(Scripted.transcription({}, input), "Scripted transcription of clip.mp4 (42 bytes).")
    assert.strictEqual(Scripted.transcription({ transcription: "Hello from {{fileName}}" }, input), "Hello from clip.mp4")
  })
})

describe("Scripted: the demo script", () => {
  const layer = Scripted.layer(demoScript)

  it.effect("calls transcribe_video, then shows the transcription, else echoes", () =>
    Effect.gen(function*() {
      const ask = user("Please TRANSCRIBE my video")
      const first = yield* chat(layer, params([ask], [TranscribeVideo]))
      assert.deepStrictEqual(first.toolCalls, [{ id: "call_1_0", name: "transcribe_video", args: {} }])

      const second = yield* chat(layer, params([
        ask,
        assistant(first.content, { toolCalls: first.toolCalls ?? [] }),
        toolMessage("call_1_0", "transcribe_video", { result: "hello world" })
      ], [TranscribeVideo]))
      assert.deepStrictEqual(second, { content: "Here is the transcription: hello world" })

      const echo = yield* chat(layer, params([user("good morning")]))
      assert.include(echo.content, "good morning")
      assert.isUndefined(echo.toolCalls)
    }))

  it.effect("transcribes an upload with a sentence naming the file and its size", () =>
    Effect.gen(function*() {
      const text = yield* Transcriber.use((t) =>
        t.transcribe({ data: new Uint8Array(2048), fileName: "talk.webm", mediaType: "video/webm" })
      ).pipe(Effect.provide(layer))
      assert.strictEqual(text, "Scripted transcription of talk.webm (2048 bytes).")
    }))
})

describe("Scripted: a bad script file", () => {
  const failure = (path: string) =>
    Effect.gen(function*() {
      const error = yield* chat(Scripted.layer(path), params([user("hi")])).pipe(Effect.flip)
      assert.strictEqual(error.reason, "NotConfigured")
      assert.deepStrictEqual(error.missing, ["LLM_SCRIPT"])
      assert.match(error.message, /^LLM provider not configured: /)
      // The transcriber is just as unusable.
      const transcription = yield* Transcriber.use((t) =>
        t.transcribe({ data: new Uint8Array(1), fileName: "a", mediaType: "audio/wav" })
      ).pipe(Effect.provide(Scripted.layer(path)), Effect.flip)
      assert.strictEqual(transcription.reason, "NotConfigured")
      return error.message
    })

  it.effect("missing file → NotConfigured", () =>
    Effect.gen(function*() {
      const message = yield* failure(join(scratch, "nope.json"))
      assert.include(message, "cannot be read")
    }))

  it.effect("missing file → the chat route's 502 says the file cannot be read, not that LLM_SCRIPT is missing", () =>
    Effect.gen(function*() {
      const error = yield* chat(Scripted.layer(join(scratch, "nope.json")), params([user("hi")])).pipe(Effect.flip)
      const wire = yield* toWireError(error).pipe(Effect.flip)
      assert.instanceOf(wire, ProviderNotConfigured)
      if (!(wire instanceof ProviderNotConfigured)) return
      assert.match(wire.error, /^LLM provider not configured: the LLM_SCRIPT file .*nope\.json cannot be read: ENOENT/)
      assert.deepStrictEqual(wire.missing, ["LLM_SCRIPT"])
    }))

  it.effect("invalid JSON → NotConfigured", () =>
    Effect.gen(function*() {
      const message = yield* failure(writeScript("broken.json", "{ rules: "))
      assert.include(message, "is not valid JSON")
    }))

  it.effect("a typo in a key → NotConfigured naming it", () =>
    Effect.gen(function*() {
      const message = yield* failure(writeScript("typo.json", JSON.stringify({ rules: [{ when: { contain: "x" }, reply: {} }] })))
      assert.include(message, "[\"contain\"]")
      assert.notInclude(message, "\n")
    }))

  it.effect("a wrong type → NotConfigured", () =>
    Effect.gen(function*() {
      yield* failure(writeScript("type.json", JSON.stringify({ rules: [{ when: { lastRole: "robot" }, reply: { content: 1 } }] })))
    }))

  it.effect("a valid file loads", () =>
    Effect.gen(function*() {
      const path = writeScript("ok.json", JSON.stringify({ fallback: { content: "fine" } }))
      assert.deepStrictEqual(yield* chat(Scripted.layer(path), params([message("system", "x")])), { content: "fine" })
    }))
})

describe("scripted provider: delayMs", () => {
  it.effect("a reply with delayMs answers only after that long (a demo's slow sub-agent step)", () =>
    Effect.gen(function*() {
      const slow: Script = { rules: [{ when: { lastRole: "user" }, reply: { content: "late", delayMs: 1500 } }] }
      const fiber = yield* Effect.forkChild(chat(Scripted.layerFromScript(slow), params([user("hi")])))
      yield* TestClock.adjust("1499 millis")
      assert.isUndefined(fiber.pollUnsafe(), "not answered before its delay")
      yield* TestClock.adjust("1 millis")
      assert.strictEqual((yield* Fiber.join(fiber)).content, "late")
    }))
})

describe("scripted provider: streaming", () => {
  const streamOf = (layer: ReturnType<typeof Scripted.layerFromScript>, chatParams: ProviderChatParams) =>
    ProviderAdapter.use((adapter) => Stream.runCollect(eventsOf(adapter.streamTo, chatParams))).pipe(Effect.provide(layer))

  it.effect("streams the answer word by word, then each call with its arguments in pieces; finish is chat's answer", () =>
    Effect.gen(function*() {
      const layer = Scripted.layerFromScript(script)
      const conversation = params([user("  WEATHER in Oslo,\tplease ")])
      const events = yield* streamOf(layer, conversation)
      const response = checkFinished(events)
      assert.deepStrictEqual(response, yield* chat(layer, conversation))
      assert.deepStrictEqual(events.map((e) => e.type === "finish" ? "finish" : e.type === "tool-call-start" ? `start ${e.id}` : e.delta), [
        "Checking.",
        "start call_1_0",
        "{\"city\":\"  W",
        "EATHER in Osl",
        "o,\\tplease \"}",
        "finish"
      ])
      assert.deepStrictEqual(yield* streamOf(layer, conversation), events, "the same pieces every time")
    }))

  it("splits content into words with the whitespace after each; the pieces add up to the content", () => {
    const cases: ReadonlyArray<readonly [string, Array<string>]> = [
      ["Hello there,  world!\n", ["Hello ", "there,  ", "world!\n"]],
      ["  leading", ["  leading"]],
      ["one", ["one"]],
      ["   ", ["   "]],
      ["", []]
    ]
    for (const [content, pieces] of cases) {
      assert.deepStrictEqual(Scripted.wordPieces(content), pieces, JSON.stringify(content))
      assert.strictEqual(Scripted.wordPieces(content).join(""), content)
    }
  })

  it.effect("delayMs before anything, pieceDelayMs between two pieces (watched with the test clock)", () =>
    Effect.gen(function*() {
      const paced: Script = { fallback: { content: "one two three", toolCalls: [{ name: "t", args: { a: 1 } }], delayMs: 50, pieceDelayMs: 100 } }
      const seen: Array<ProviderStreamEvent> = []
      const fiber = yield* ProviderAdapter.use((adapter) =>
        Stream.runForEach(eventsOf(adapter.streamTo, params([user("hi")])), (e) => Effect.sync(() => void seen.push(e)))
      ).pipe(Effect.provide(Scripted.layerFromScript(paced)), Effect.forkChild)
      const texts = () => seen.flatMap((e) => e.type === "text-delta" ? [e.delta] : [])
      yield* TestClock.adjust("49 millis")
      assert.deepStrictEqual(seen, [], "nothing before delayMs")
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(texts(), ["one "])
      yield* TestClock.adjust("99 millis")
      assert.deepStrictEqual(texts(), ["one "], "the next piece waits pieceDelayMs")
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(texts(), ["one ", "two "])
      yield* TestClock.adjust("100 millis")
      assert.deepStrictEqual(texts(), ["one ", "two ", "three"])
      // The call starts at once; each of its argument pieces is a piece like any other.
      assert.strictEqual(seen.at(-1)?.type, "tool-call-start")
      const args = Scripted.answerEvents(Scripted.answer(paced, params([user("hi")]))).filter((e) => e.type === "tool-call-delta").length
      yield* TestClock.adjust(`${args * 100} millis`)
      yield* Fiber.join(fiber)
      assert.strictEqual(seen.at(-1)?.type, "finish")
      checkFinished(seen)
    }))

  it.effect("a reply's usage is reported, whole and streamed (in the finish); a malformed one refuses the script", () =>
    Effect.gen(function*() {
      const usage = { inputTokens: 120, outputTokens: 9, cachedInputTokens: 100 }
      const layer = Scripted.layerFromScript({ fallback: { content: "counted", usage } })
      const conversation = params([user("hello")])
      assert.deepStrictEqual((yield* chat(layer, conversation)).usage, usage)
      assert.deepStrictEqual(checkFinished(yield* streamOf(layer, conversation)).usage, usage)
      assert.isUndefined((yield* chat(Scripted.layerFromScript({ fallback: { content: "x" } }), conversation)).usage)
      const load = (reply: unknown) => Scripted.loadScript(writeScript("usage.json", JSON.stringify({ fallback: reply })))
      const error = yield* load({ content: "x", usage: { inputTokens: "many" } }).pipe(Effect.flip)
      assert.strictEqual(error.reason, "NotConfigured")
    }))

  it.effect("pieceDelayMs is checked like delayMs: 0..10000, and a misspelt key is refused", () =>
    Effect.gen(function*() {
      const load = (reply: unknown) => Scripted.loadScript(writeScript("paced.json", JSON.stringify({ fallback: reply })))
      assert.strictEqual((yield* load({ content: "x", pieceDelayMs: 10_000 })).fallback?.pieceDelayMs, 10_000)
      for (const bad of [{ pieceDelayMs: 10_001 }, { pieceDelayMs: -1 }, { pieceDelayMs: 1.5 }, { pieceDelay: 10 }]) {
        const error = yield* load({ content: "x", ...bad }).pipe(Effect.flip)
        assert.strictEqual(error.reason, "NotConfigured", JSON.stringify(bad))
      }
    }))
})
