/**
 * The AI SDK's own client code against the real server (docs/streaming.md):
 * `DefaultChatTransport` sends what `useChat` sends to `POST /api/ui/chat`,
 * `readUIMessageStream` reads the answer into a `UIMessage` as `useChat`
 * does, and `validateUIMessages` accepts `GET /api/chats/{id}/ui-messages`
 * after each turn. The `ai` package is the pinned devDependency.
 */
import { assert, describe, layer } from "@effect/vitest"
import { DefaultChatTransport, readUIMessageStream, validateUIMessages } from "ai"
import type { UIMessage } from "ai"
import { maxStoredValueBytes, subagentResultOf } from "@switchboard/domain"
import { Effect } from "effect"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { makeFakeSubagents, researchResult } from "../support/FakeSubagents.ts"
import { eventually, settled, teacher, transcriptOf } from "../support/JobsHelpers.ts"
import { readEventStream, streamInit } from "../support/EventStream.ts"
import { backend } from "../support/TestDatabase.ts"
import { baseUrl, layerTestServer, request } from "../support/TestServer.ts"

const fake = makeFakeProvider()
const subagents = makeFakeSubagents()

const userMessage = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] })

/** One `useChat` request: the transport's stream read to its end into the assistant message it builds. */
const send = (chatId: string, messages: Array<UIMessage>) =>
  Effect.gen(function*() {
    const base = yield* baseUrl
    return yield* Effect.promise(async () => {
      const transport = new DefaultChatTransport<UIMessage>({ api: `${base}/api/ui/chat` })
      const stream = await transport.sendMessages({
        chatId,
        messages,
        trigger: "submit-message",
        messageId: undefined,
        abortSignal: undefined
      })
      const last = messages[messages.length - 1]
      // A continuation extends the assistant message it continues, as `useChat` does.
      const continued = last?.role === "assistant" ? structuredClone(last) : undefined
      let message: UIMessage | undefined
      for await (const snapshot of readUIMessageStream({ stream, ...(continued === undefined ? {} : { message: continued }) })) {
        message = snapshot
      }
      return message!
    })
  })

/** The transcript as UIMessages, checked by the AI SDK's own validator. */
const uiMessages = (chatId: string) =>
  Effect.gen(function*() {
    const res = yield* request(`/api/chats/${chatId}/ui-messages`)
    assert.strictEqual(res.status, 200)
    return yield* Effect.promise(() => validateUIMessages<UIMessage>({ messages: res.json.messages }))
  })

const textOf = (message: UIMessage) => message.parts.flatMap((p) => p.type === "text" ? [p.text] : []).join("")

describe(`the AI SDK's client against the server (${backend})`, () => {
  layer(layerTestServer(fake.layer, {}, { subagents: subagents.layer }), { excludeTestServices: true })("useChat's wire", (it) => {
    it.effect("a text answer: the UIMessage built from the stream is the stored answer", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        const answer = yield* send("ui-text", [userMessage("u1", "hello there")])
        assert.strictEqual(answer.role, "assistant")
        assert.strictEqual(textOf(answer), "you said: hello there")
        const stored = (yield* transcriptOf("ui-text")).filter((m) => m.role === "assistant")
        assert.deepStrictEqual(stored.map((m) => [m.id, m.content]), [[answer.id, "you said: hello there"]])
        const messages = yield* uiMessages("ui-text")
        assert.deepStrictEqual(messages.map((m) => m.role), ["user", "assistant"])
        assert.strictEqual(textOf(messages[1]!), "you said: hello there")
      }))

    it.effect("a client tool round trip the way useChat does it: the stream ends at tool-input-available, the output is added, the next request continues", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => {
          const last = params.messages.at(-1)
          if (last?.role === "tool") return Effect.succeed({ content: `transcript says: ${JSON.stringify(last.toolResult?.result)}` })
          return Effect.succeed({ content: "", toolCalls: [{ id: "call_tv_1", name: "transcribe_video", args: { assetId: "v1" } }] })
        })
        const question = userMessage("u1", "what does the interview say?")
        const first = yield* send("ui-tool", [question])
        const part = first.parts.find((p) => p.type === "tool-transcribe_video") as any
        assert.strictEqual(part.state, "input-available")
        assert.deepStrictEqual(part.input, { assetId: "v1" })
        assert.deepStrictEqual((yield* uiMessages("ui-tool")).map((m) => m.role), ["user", "assistant"])

        // useChat's addToolOutput, then the automatic resend of the whole history.
        const withOutput: UIMessage = {
          ...first,
          parts: first.parts.map((p) => p.type === "tool-transcribe_video" ? { ...(p as any), state: "output-available", output: { text: "We ship Friday" } } : p)
        }
        const continued = yield* send("ui-tool", [question, withOutput])
        assert.strictEqual(continued.id, first.id, "the continuation extends the message it continues")
        assert.include(textOf(continued), "We ship Friday")
        const transcript = yield* transcriptOf("ui-tool")
        assert.deepStrictEqual(transcript.map((m) => m.role), ["user", "assistant", "tool", "assistant"])
        assert.strictEqual(transcript.filter((m) => m.role === "tool").length, 1)

        // Sent again with the next question, nothing is stored twice.
        yield* send("ui-tool", [question, continued, userMessage("u2", "thanks")])
        const after = yield* transcriptOf("ui-tool")
        assert.deepStrictEqual(after.map((m) => m.role), ["user", "assistant", "tool", "assistant", "user", "assistant"])
        const messages = yield* uiMessages("ui-tool")
        const tool = messages[1]!.parts.find((p) => p.type === "tool-transcribe_video") as any
        assert.strictEqual(tool.state, "output-available")
      }))

    it.effect("a provider's tool call id longer than a message id: the round trip stores its result once, and ui-messages still answers", () =>
      Effect.gen(function*() {
        const callId = `call_${"x".repeat(300)}`
        fake.answerWith((params) => {
          const last = params.messages.at(-1)
          if (last?.role === "tool") return Effect.succeed({ content: "done" })
          return Effect.succeed({ content: "", toolCalls: [{ id: callId, name: "transcribe_video", args: { assetId: "v1" } }] })
        })
        const question = userMessage("u1", "transcribe it")
        const first = yield* send("ui-long-call", [question])
        const part = first.parts.find((p) => p.type === "tool-transcribe_video") as any
        assert.strictEqual(part.toolCallId, callId)
        assert.strictEqual((yield* uiMessages("ui-long-call")).length, 2)
        const withOutput: UIMessage = {
          ...first,
          parts: first.parts.map((p) => p.type === "tool-transcribe_video" ? { ...(p as any), state: "output-available", output: { text: "hi" } } : p)
        }
        const continued = yield* send("ui-long-call", [question, withOutput])
        yield* send("ui-long-call", [question, continued, userMessage("u2", "thanks")])
        const transcript = yield* transcriptOf("ui-long-call")
        assert.deepStrictEqual(transcript.map((m) => m.role), ["user", "assistant", "tool", "assistant", "user", "assistant"])
        assert.strictEqual(transcript[2]?.toolResult?.toolCallId, callId)
        const tool = (yield* uiMessages("ui-long-call"))[1]!.parts.find((p) => p.type === "tool-transcribe_video") as any
        assert.strictEqual(tool.state, "output-available")
        assert.strictEqual(tool.toolCallId, callId)
      }))

    it.effect("a turn that failed after its stream began stores nothing, not even when its partial message is sent back", () =>
      Effect.gen(function*() {
        // An answer larger than a stored message: the stream begins (the 200, `start`), then ends with `error`.
        fake.answerWith(() => Effect.succeed({ content: "x".repeat(maxStoredValueBytes + 1) }))
        const question = userMessage("u1", "tell me everything")
        const url = `${yield* baseUrl}/api/ui/chat`
        const failed = yield* readEventStream(url, streamInit({ id: "ui-failed", messages: [question] }))
        assert.strictEqual(failed.status, 200)
        assert.strictEqual(failed.chunks.at(-1)?.type, "error")
        const start = failed.chunks.find((c) => c.type === "start")
        const announced = start?.type === "start" ? start.messageId : ""
        assert.match(announced, /^msg_/)

        // useChat keeps what streamed before the error and sends it with the next question.
        fake.answerWith(() => Effect.succeed({ content: "a short answer" }))
        const partial: UIMessage = { id: announced, role: "assistant", parts: [{ type: "text", text: "Partial answer " }] }
        const next = yield* send("ui-failed", [question, partial, userMessage("u2", "in short, then")])
        assert.strictEqual(textOf(next), "a short answer")
        const transcript = yield* transcriptOf("ui-failed")
        assert.deepStrictEqual(transcript.map((m) => m.role), ["user", "user", "assistant"])
        assert.notInclude(transcript.map((m) => m.id), announced)
        assert.notInclude(fake.calls.at(-1)!.messages.map((m) => m.content), "Partial answer ")
      }))

    it.effect("a turn that dispatches a research job: the dispatch's output is its acknowledgement; the steer and the wake answer follow", () =>
      Effect.gen(function*() {
        fake.answerWith((params) => Effect.succeed(teacher(params)))
        subagents.gated()
        const answer = yield* send("ui-job", [userMessage("u1", "research graph layouts")])
        const dispatch = answer.parts.find((p) => p.type === "tool-research") as any
        assert.strictEqual(dispatch.state, "output-available")
        assert.strictEqual(dispatch.output.status, "dispatched")
        assert.strictEqual(dispatch.output.kind, "research")
        assert.include(textOf(answer), "dispatched")
        yield* uiMessages("ui-job")

        // The wake turn takes a moment, so that it is followed while it runs.
        fake.answerWith((params) => {
          const last = params.messages.at(-1)
          const answer = Effect.succeed(teacher(params))
          return last !== undefined && subagentResultOf(last) !== undefined ? Effect.delay(answer, "400 millis") : answer
        })
        // The file's only job.
        const [job] = yield* subagents.waitForRuns(1)
        yield* subagents.finish(job!.jobId, researchResult("Force-directed layouts suit small graphs."))
        // useChat's resume (`resume: true`): the transport's reconnect, on the AI SDK's resume route.
        const base = yield* baseUrl
        const wake = yield* eventually(
          Effect.promise(async () => {
            const transport = new DefaultChatTransport<UIMessage>({ api: `${base}/api/ui/chat` })
            const stream = await transport.reconnectToStream({ chatId: "ui-job" })
            if (stream === null) return undefined
            let message: UIMessage | undefined
            for await (const snapshot of readUIMessageStream({ stream })) message = snapshot
            return message
          }),
          (m) => m !== undefined,
          "the wake turn, followed while it runs"
        )
        assert.match(textOf(wake!), /^wake answer: /u)
        yield* settled("ui-job")
        const messages = yield* eventually(uiMessages("ui-job"), (ms) => ms.length >= 4 && textOf(ms[ms.length - 1]!).startsWith("wake answer"), "the wake answer")
        const steer = messages.find((m) => (m.metadata as any)?.subagentResult !== undefined)!
        assert.isDefined(steer)
        assert.isTrue(steer.parts.some((p) => p.type === "data-subagent-artifact"))
        assert.strictEqual(messages.filter((m) => m === steer).length, 1)
      }))
  })
})
