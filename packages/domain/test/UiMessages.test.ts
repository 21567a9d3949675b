import { assert, describe, it } from "@effect/vitest"
import { AbstractChat, convertToModelMessages, DefaultChatTransport, validateUIMessages } from "ai"
import type { ChatState, ChatStatus, UIMessage } from "ai"
import { Schema } from "effect"
import fc from "fast-check"
import type { ChatMessage, JsonObject, ToolResult, UiChunk } from "../src/index.ts"
import {
  buildSubagentSteer,
  ChatMessage as ChatMessageSchema,
  fromUiMessages,
  MessageId,
  jobAcknowledgement,
  SSE_DONE,
  sseEvent,
  toolResultMessage,
  toolResultMessageId,
  toUiMessages,
  UI_STREAM_HEADERS,
  UiChatRequest,
  UiMessage,
  UiTranscript
} from "../src/index.ts"

const NOW = 1_700_000_000_000

const user = (id: string, content: string, timestamp: number): ChatMessage => ({ id, role: "user", content, timestamp })
const assistant = (id: string, content: string, timestamp: number, toolCalls?: ChatMessage["toolCalls"]): ChatMessage => ({
  id,
  role: "assistant",
  content,
  ...(toolCalls === undefined ? {} : { toolCalls }),
  timestamp
})
const result = (toolResult: ToolResult) => toolResultMessage(toolResult, NOW)

/** What the server answers: the transcript as UIMessages, through JSON. */
const served = (transcript: ReadonlyArray<ChatMessage>) =>
  JSON.parse(JSON.stringify({ messages: toUiMessages(transcript) })) as { messages: Array<UIMessage> }

/** What `POST /api/ui/chat` makes of a body. */
const received = (body: unknown) => {
  const request = Schema.decodeUnknownSync(UiChatRequest)(JSON.parse(JSON.stringify(body)))
  const messages = fromUiMessages(request.messages, NOW)
  for (const message of messages) Schema.decodeUnknownSync(ChatMessageSchema)(message)
  return messages
}

// ---------------------------------------------------------------------------
// Transcripts as Switchboard writes them

const textAnswer = [user("u1", "Hello?", 1), assistant("a1", "Hi! How can I help?", 2)]

const transcribe = { id: "call_t1", name: "transcribe_video", args: { assetId: "v1" } }
const clientToolRoundTrip = [
  user("u1", "What does the interview say?", 1),
  assistant("a1", "Let me listen to it.", 2, [transcribe]),
  result({ toolCallId: "call_t1", name: "transcribe_video", result: { text: "We ship on Friday." } }),
  assistant("a2", "They say they ship on Friday.", 3)
]

const job = { id: "job_1", kind: "research" as const, toolCallId: "call_r1" }
const research = { id: "call_r1", name: "research", args: { question: "Who invented the zoetrope?" } }
const researchResult = { brief: "William George Horner, 1834.", sources: [{ title: "Zoetrope", url: "https://example.org/z" }] }
const researchJob = [
  user("u1", "Who invented the zoetrope?", 1),
  assistant("a1", "", 2, [research]),
  result({ toolCallId: "call_r1", name: "research", result: jobAcknowledgement(job) }),
  assistant("a2", "I've asked a researcher; the answer follows.", 3),
  buildSubagentSteer(job, researchResult, 4),
  assistant("a3", "Horner invented it in 1834.", 5)
]

const erroredTool = [
  user("u1", "Transcribe the missing clip.", 1),
  assistant("a1", "", 2, [{ ...transcribe, args: { assetId: "gone" } }]),
  result({ toolCallId: "call_t1", name: "transcribe_video", error: "asset gone not found" }),
  assistant("a2", "That clip is missing.", 3)
]

const pendingCall = [user("u1", "Transcribe it.", 1), assistant("a1", "", 2, [transcribe])]

const fixtures: Array<[string, Array<ChatMessage>]> = [
  ["a text answer", textAnswer],
  ["a client tool round trip", clientToolRoundTrip],
  ["a research job, its steer and the wake answer", researchJob],
  ["an errored tool", erroredTool],
  ["a call not answered yet", pendingCall]
]

describe("toUiMessages", () => {
  it.each(fixtures)("the ai package's validateUIMessages accepts %s, and so does UiTranscript", async (_name, transcript) => {
    const { messages } = served(transcript)
    const validated = await validateUIMessages({ messages })
    assert.strictEqual(validated.length, transcript.filter((m) => m.role !== "tool").length)
    Schema.decodeUnknownSync(UiTranscript)({ messages })
  })

  it("a text answer: one text part each, the assistant's round opened by step-start, the timestamp in metadata", () => {
    assert.deepStrictEqual(toUiMessages(textAnswer), [
      { id: "u1", role: "user", parts: [{ type: "text", text: "Hello?" }], metadata: { timestamp: 1 } },
      {
        id: "a1",
        role: "assistant",
        parts: [{ type: "step-start" }, { type: "text", text: "Hi! How can I help?", state: "done" }],
        metadata: { timestamp: 2 }
      }
    ])
  })

  it("a tool result is folded into the part of the call it answers; each stored round stays a UIMessage", () => {
    const [, first, second] = toUiMessages(clientToolRoundTrip)
    assert.deepStrictEqual(first?.parts, [
      { type: "step-start" },
      { type: "text", text: "Let me listen to it.", state: "done" },
      {
        type: "tool-transcribe_video",
        toolCallId: "call_t1",
        state: "output-available",
        input: { assetId: "v1" },
        output: { text: "We ship on Friday." }
      }
    ])
    assert.strictEqual(second?.id, "a2")
    assert.strictEqual(toUiMessages(clientToolRoundTrip).length, 3)
  })

  it("the AI SDK reads the folded transcript as the provider conversation it was", async () => {
    const model = await convertToModelMessages(served(clientToolRoundTrip).messages)
    assert.deepStrictEqual(model.map((m) => m.role), ["user", "assistant", "tool", "assistant"])
  })

  it("a job dispatch shows its acknowledgement as output; the steer keeps its marker and artifact part", () => {
    const [, dispatch, , steer] = toUiMessages(researchJob)
    assert.deepStrictEqual(dispatch?.parts, [
      { type: "step-start" },
      {
        type: "tool-research",
        toolCallId: "call_r1",
        state: "output-available",
        input: research.args,
        output: jobAcknowledgement(job)
      }
    ])
    assert.deepStrictEqual(steer, {
      id: "steer_job_1",
      role: "user",
      parts: [
        { type: "text", text: researchJob[4]!.content },
        { type: "data-subagent-artifact", data: { kind: "research", result: researchResult } }
      ],
      metadata: { subagentResult: { jobId: "job_1", kind: "research", toolCallId: "call_r1" }, timestamp: 4 }
    })
  })

  it("an errored tool is output-error with its errorText; an unanswered call is input-available", () => {
    assert.deepStrictEqual(toUiMessages(erroredTool)[1]?.parts[1], {
      type: "tool-transcribe_video",
      toolCallId: "call_t1",
      state: "output-error",
      input: { assetId: "gone" },
      errorText: "asset gone not found"
    })
    assert.deepStrictEqual(toUiMessages(pendingCall)[1]?.parts[1], {
      type: "tool-transcribe_video",
      toolCallId: "call_t1",
      state: "input-available",
      input: { assetId: "v1" }
    })
  })

  it("system messages keep their role; a result answering no call of the transcript is left out", () => {
    const orphan = result({ toolCallId: "call_x", name: "transcribe_video", result: "?" })
    const messages = toUiMessages([{ id: "s1", role: "system", content: "Be brief.", timestamp: 0 }, orphan])
    assert.deepStrictEqual(messages, [{ id: "s1", role: "system", parts: [{ type: "text", text: "Be brief." }], metadata: { timestamp: 0 } }])
  })
})

describe("fromUiMessages", () => {
  it.each(fixtures)("gives back %s", (_name, transcript) => {
    assert.deepStrictEqual(received({ id: "chat1", messages: served(transcript).messages }), transcript)
  })

  it("a result's message id comes from its call: the same result sent twice is one id", () => {
    const [, , tool] = received({ id: "chat1", messages: served(clientToolRoundTrip).messages })
    assert.strictEqual(tool?.id, "result_call_t1")
  })

  it("other part types are ignored (file, reasoning, source-url, custom…); extra body keys are dropped", () => {
    const request = Schema.decodeUnknownSync(UiChatRequest)({
      id: "chat1",
      trigger: "submit-message",
      clientVersion: "1.2.3",
      agent: "media-editor",
      messages: [
        {
          id: "u1",
          role: "user",
          parts: [
            { type: "file", mediaType: "image/png", url: "data:image/png;base64,AA==" },
            { type: "text", text: "What is in this picture?" }
          ]
        },
        {
          id: "a1",
          role: "assistant",
          parts: [
            { type: "step-start" },
            { type: "reasoning", text: "Looking…", state: "done" },
            { type: "source-url", sourceId: "s", url: "https://example.org" },
            { type: "custom", kind: "openai.thing" },
            { type: "text", text: "A cat.", state: "done" }
          ]
        }
      ]
    })
    assert.deepStrictEqual(Object.keys(request).sort(), ["agent", "id", "messages", "trigger"])
    assert.deepStrictEqual(fromUiMessages(request.messages, NOW), [
      user("u1", "What is in this picture?", NOW),
      assistant("a1", "A cat.", NOW)
    ])
  })

  it("a part of a known type that does not match its schema is refused, not ignored", () => {
    const refused = (part: unknown) =>
      Schema.decodeUnknownExit(UiMessage)({ id: "a1", role: "assistant", parts: [part] })._tag === "Failure"
    assert.isTrue(refused({ type: "text" }))
    assert.isTrue(refused({ type: "tool-transcribe_video", toolCallId: "c", state: "approval-requested", input: {} }))
    assert.isFalse(refused({ type: "tool-transcribe_video", toolCallId: "c", state: "approval-requested", input: {}, approval: { id: "apr_1" } }))
    assert.isTrue(refused({ type: "tool-x", toolCallId: "c", state: "approval-responded", input: {}, approval: { approved: true } }))
    assert.isTrue(refused({ type: "tool-", toolCallId: "c", state: "input-available", input: {} }))
    assert.isTrue(refused({ type: "data-not.a.name", data: 1 }))
    assert.isTrue(refused({ type: "tool-x", toolCallId: "", state: "input-available", input: {} }))
    assert.isFalse(refused({ type: "tool-x", toolCallId: "c".repeat(1000), state: "input-available", input: {} }))
  })

  it("a tool call id of any length answers with a valid message id of its own, the same every time", () => {
    const long = (tail: string) => "c".repeat(300) + tail
    const ids = [toolResultMessageId(long("1")), toolResultMessageId(long("2")), toolResultMessageId("😀".repeat(250))]
    for (const id of ids) assert.isTrue(Schema.is(MessageId)(id), id)
    assert.strictEqual(new Set(ids).size, 3, "calls sharing a long head still have ids of their own")
    assert.strictEqual(toolResultMessageId(long("1")), ids[0])
    assert.strictEqual(toolResultMessageId("c".repeat(193)), `result_${"c".repeat(193)}`, "an id that fits is kept whole")
    // The AI SDK's history with such a call, sent back: the result is stored under that id, once.
    const call = long("1")
    const [, answer, tool] = fromUiMessages(Schema.decodeUnknownSync(Schema.Array(UiMessage))([
      { id: "u1", role: "user", parts: [{ type: "text", text: "go" }] },
      { id: "a1", role: "assistant", parts: [{ type: "tool-x", toolCallId: call, state: "output-available", input: {}, output: 1 }] }
    ]), NOW)
    assert.strictEqual(answer?.toolCalls?.[0]?.id, call)
    assert.strictEqual(tool?.id, ids[0])
    assert.strictEqual(tool?.toolResult?.toolCallId, call)
  })

  it("dynamic tools, inputs that are not objects, calls still streaming and metadata", () => {
    const messages = fromUiMessages(
      Schema.decodeUnknownSync(Schema.Array(UiMessage))([{
        id: "a1",
        role: "assistant",
        metadata: { timestamp: 7, usage: { inputTokens: 3, outputTokens: 4 } },
        parts: [
          { type: "dynamic-tool", toolName: "lookup", toolCallId: "c1", state: "output-available", input: { q: "x" }, output: [1] },
          { type: "tool-transcribe_video", toolCallId: "c2", state: "output-error", input: "oops", errorText: "bad input" },
          { type: "tool-transcribe_video", toolCallId: "c3", state: "input-streaming", input: { asset: "v" } }
        ]
      }]),
      NOW
    )
    assert.deepStrictEqual(messages, [
      {
        id: "a1",
        role: "assistant",
        content: "",
        metadata: { usage: { inputTokens: 3, outputTokens: 4 } },
        timestamp: 7,
        toolCalls: [
          { id: "c1", name: "lookup", args: { q: "x" } },
          { id: "c2", name: "transcribe_video", args: {}, invalidArgs: "\"oops\"" }
        ]
      },
      result({ toolCallId: "c1", name: "lookup", result: [1] }),
      result({ toolCallId: "c2", name: "transcribe_video", error: "bad input" })
    ])
  })
})

// ---------------------------------------------------------------------------
// The AI SDK's own chat (what `useChat` runs) against a scripted `POST /api/ui/chat`

class MemoryState implements ChatState<UIMessage> {
  status: ChatStatus = "ready"
  error: Error | undefined = undefined
  messages: Array<UIMessage>
  constructor(messages: Array<UIMessage> = []) {
    this.messages = messages
  }
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message]
  }
  popMessage = () => {
    this.messages = this.messages.slice(0, -1)
  }
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((m, i) => i === index ? message : m)
  }
  snapshot = <T,>(thing: T): T => structuredClone(thing)
}

class ScriptedChat extends AbstractChat<UIMessage> {
  constructor(transport: DefaultChatTransport<UIMessage>, messages?: Array<UIMessage>) {
    let n = 0
    super({ id: "chat1", transport, generateId: () => `gen_${++n}`, state: new MemoryState(messages) })
  }
  get all() {
    return this.state.messages
  }
}

/** A `DefaultChatTransport` whose server answers each request with the next script, and keeps the bodies. */
const scriptedServer = (scripts: Array<ReadonlyArray<UiChunk>>) => {
  const bodies: Array<unknown> = []
  const transport = new DefaultChatTransport<UIMessage>({
    api: "/api/ui/chat",
    // `body` extras reach the server at the top level of the request body.
    body: { agent: "media-editor", context: { projectId: "p1" }, clientVersion: "1.0" },
    fetch: async (_url, init) => {
      bodies.push(JSON.parse(String(init?.body)))
      const chunks = scripts.shift() ?? []
      return new Response(chunks.map(sseEvent).join("") + SSE_DONE, { headers: UI_STREAM_HEADERS })
    }
  })
  return { transport, bodies }
}

const textRound = (messageId: string, text: string): ReadonlyArray<UiChunk> => [
  { type: "start", messageId },
  { type: "start-step" },
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: text },
  { type: "text-end", id: "t" },
  { type: "finish-step" },
  { type: "finish", finishReason: "stop" }
]

const toolRound: ReadonlyArray<UiChunk> = [
  { type: "start", messageId: "a1" },
  { type: "start-step" },
  { type: "tool-input-start", toolCallId: "call_t1", toolName: "transcribe_video" },
  { type: "tool-input-delta", toolCallId: "call_t1", inputTextDelta: "{\"assetId\":\"v1\"}" },
  { type: "tool-input-available", toolCallId: "call_t1", toolName: "transcribe_video", input: { assetId: "v1" } },
  { type: "finish-step" },
  { type: "finish", finishReason: "tool-calls" }
]

const transcribed = { tool: "transcribe_video", toolCallId: "call_t1", output: { text: "We ship on Friday." } } as const

describe("what the AI SDK's chat sends", () => {
  it("a client tool round trip: each request becomes the messages the server stores, none twice", async () => {
    // The continuation's stream names the message it continues, as the AI SDK's own server does.
    const { bodies, transport } = scriptedServer([toolRound, textRound("a1", "They ship on Friday."), textRound("a3", "You're welcome.")])
    const chat = new ScriptedChat(transport)

    await chat.sendMessage({ text: "What does the interview say?" })
    const stored: Array<ChatMessage> = [...received(bodies[0]), assistant("a1", "", NOW, [transcribe])]
    assert.deepStrictEqual(stored.map((m) => m.id), ["gen_1", "a1"])

    // The client runs the tool and continues, as `sendAutomaticallyWhen` would.
    await chat.addToolOutput(transcribed)
    await chat.sendMessage()
    assert.deepStrictEqual(received(bodies[1]), [
      user("gen_1", "What does the interview say?", NOW),
      assistant("a1", "", NOW, [transcribe]),
      result({ toolCallId: "call_t1", name: "transcribe_video", result: { text: "We ship on Friday." } })
    ])
    const isNew = (m: ChatMessage) => !stored.some((s) => s.id === m.id)
    // The server stores the continuation as a round of its own.
    stored.push(...received(bodies[1]).filter(isNew), assistant("a2", "They ship on Friday.", NOW))

    // The AI SDK holds both rounds in one UIMessage; sent again, all of it is already stored.
    await chat.sendMessage({ text: "Thanks!" })
    const [, merged, thanks] = chat.all
    assert.deepStrictEqual(merged?.parts.map((p) => p.type), ["step-start", "tool-transcribe_video", "step-start", "text"])
    assert.deepStrictEqual(received(bodies[2]).filter(isNew), [user(thanks!.id, "Thanks!", NOW)])
    assert.deepStrictEqual(Schema.decodeUnknownSync(UiChatRequest)(bodies[2]).agent, "media-editor")
  })

  it("a continuation's start must name the message it continues: a new id shows the earlier round twice", async () => {
    const { transport } = scriptedServer([toolRound, textRound("a2", "They ship on Friday.")])
    const chat = new ScriptedChat(transport)
    await chat.sendMessage({ text: "What does the interview say?" })
    await chat.addToolOutput(transcribed)
    await chat.sendMessage()
    assert.deepStrictEqual(chat.all.map((m) => [m.id, m.parts.filter((p) => p.type.startsWith("tool-")).length]), [
      ["gen_1", 0],
      ["a1", 1],
      ["a2", 1]
    ])
  })

  it("a chat loaded from ui-messages answers its pending call: only the result is new", async () => {
    const { bodies, transport } = scriptedServer([textRound("a1", "They ship on Friday.")])
    const chat = new ScriptedChat(transport, served(pendingCall).messages)
    await chat.addToolOutput(transcribed)
    await chat.sendMessage()
    const stored = new Set(pendingCall.map((m) => m.id))
    assert.deepStrictEqual(received(bodies[0]).filter((m) => !stored.has(m.id)), [
      result({ toolCallId: "call_t1", name: "transcribe_video", result: { text: "We ship on Friday." } })
    ])
  })
})

// ---------------------------------------------------------------------------
// The round trip over generated transcripts

const jsonLeaf = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.string({ unit: "grapheme-ascii", maxLength: 8 }))
const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    jsonLeaf,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("a", "b", "title"), tie("value"), { maxKeys: 3 })
  )
})).value
const jsonObject = fc.dictionary(fc.constantFrom("a", "b", "note"), json, { maxKeys: 3 }) as fc.Arbitrary<JsonObject>
// An empty metadata object is not told apart from none: the UIMessage carries the timestamp there too.
const metadata = fc.dictionary(fc.constantFrom("a", "b", "note"), json, { minKeys: 1, maxKeys: 3 }) as fc.Arbitrary<JsonObject>
const text = fc.string({ unit: "grapheme", maxLength: 20 }).filter((s) => !s.includes("\u0000"))
const toolName = fc.constantFrom("transcribe_video", "research", "demo", "lookup-docs")

/** One step of a conversation: a message, or an assistant round with its calls and the results given to some. */
const step = fc.oneof(
  fc.record({
    kind: fc.constant("user" as const),
    content: text,
    metadata: fc.option(metadata, { nil: undefined }),
    data: fc.array(json, { maxLength: 2 })
  }),
  fc.record({ kind: fc.constant("system" as const), content: text }),
  fc.record({ kind: fc.constant("steer" as const), brief: text }),
  fc.record({
    kind: fc.constant("assistant" as const),
    content: text,
    stopped: fc.boolean(),
    calls: fc.array(
      fc.record({
        name: toolName,
        args: jsonObject,
        answer: fc.oneof(
          fc.constant(undefined),
          fc.record({ result: json.filter((v) => v !== null) }),
          fc.record({ error: text.filter((e) => e !== "") }),
          fc.constant({})
        )
      }),
      { maxLength: 3 }
    )
  })
)

const transcriptOf = (steps: ReadonlyArray<typeof step extends fc.Arbitrary<infer S> ? S : never>): Array<ChatMessage> => {
  const out: Array<ChatMessage> = []
  steps.forEach((s, i) => {
    const id = `m${i}`
    switch (s.kind) {
      case "user":
        out.push({
          ...user(id, s.content, i),
          ...(s.metadata === undefined ? {} : { metadata: s.metadata }),
          ...(s.data.length === 0
            ? {}
            : { parts: [{ type: "text", text: s.content }, ...s.data.map((data, d) => ({ type: `data-item${d}`, data }))] })
        })
        return
      case "system":
        out.push({ id, role: "system", content: s.content, timestamp: i })
        return
      case "steer":
        out.push(buildSubagentSteer({ id: `job${i}`, kind: "research", toolCallId: `call${i}` }, { brief: s.brief, sources: [] }, i))
        return
      case "assistant": {
        const calls = s.calls.map((c, n) => ({ id: `call_${i}_${n}`, name: c.name, args: c.args }))
        out.push({ ...assistant(id, s.content, i, calls.length === 0 ? undefined : calls), ...(s.stopped ? { metadata: { stopped: true } } : {}) })
        s.calls.forEach((c, n) => {
          if (c.answer !== undefined) out.push(result({ toolCallId: `call_${i}_${n}`, name: c.name, ...c.answer }))
        })
      }
    }
  })
  return out
}

describe("the round trip", () => {
  it("fromUiMessages(toUiMessages(t)) is t for transcripts Switchboard writes, and validateUIMessages accepts every toUiMessages(t)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
        const transcript = transcriptOf(steps)
        for (const message of transcript) Schema.decodeUnknownSync(ChatMessageSchema)(message)
        const { messages } = served(transcript)
        await validateUIMessages({ messages })
        assert.deepStrictEqual(received({ id: "chat1", messages }), transcript)
      }),
      { numRuns: 200 }
    )
  })
})
