/**
 * How the chat renders a message (no browser: React's server renderer): the chat store's messages
 * become the UIMessages `/ui-messages` answers (`uiMessagesOf`, the domain's `toUiMessages`), each
 * tool part carrying its own output; a message unchanged keeps its UIMessage object; and each part
 * type has its component — text, a tool call in each state (the approval states too, which no
 * server path produces yet), a job's dispatch card, a steer's result card — for a kind an operator
 * defined too: its call is a dispatch card once acknowledged (or while its agent names the kind),
 * its result the readable tree of what its sub-agent submitted, its `{ error }` the failure.
 */
import { buildSubagentSteer, jobAcknowledgement, toolResultMessage, toUiMessages } from "@switchboard/domain"
import type { ChatMessage, UiMessage } from "@switchboard/domain"
import { createElement } from "react"
import { renderToStaticMarkup } from "react-dom/server"
import { assert, describe, it, vi } from "vitest"
import { MessageItem } from "../src/chat/MessageItem.tsx"
import { AgentJobKinds } from "../src/jobs/JobViews.tsx"
import type { TurnActivity } from "../src/chat/parts/TurnActivity.ts"
import { TurnActivityContext } from "../src/chat/parts/TurnActivity.ts"
import type { ToolPart } from "../src/chat/UiChat.ts"
import { uiMessagesOf } from "../src/chat/UiChat.ts"

// The markdown renderer's chunk needs a DOM (DOMPurify): here a stand-in that marks what it rendered.
vi.mock("../src/chat/MarkdownRenderer.ts", () => ({ renderMarkdown: (text: string) => `<p data-md="">${text}</p>` }))

const user: ChatMessage = { id: "m_user", role: "user", content: "Please transcribe my clip", timestamp: 1_000 }
const asking: ChatMessage = {
  id: "m_ask",
  role: "assistant",
  content: "Let me transcribe that.",
  toolCalls: [
    { id: "call_t", name: "transcribe_video", args: { assetId: "clip" } },
    { id: "call_bad", name: "transcribe_video", args: {}, invalidArgs: "not json" },
    { id: "call_r", name: "research", args: { question: "What changed in Sigma.js v3?" } }
  ],
  timestamp: 2_000
}
const transcribed = toolResultMessage({ toolCallId: "call_t", name: "transcribe_video", result: { text: "Transcript of clip.webm" } }, 3_000)
const refused = toolResultMessage({ toolCallId: "call_bad", name: "transcribe_video", error: "invalid arguments" }, 3_000)
const acknowledged = toolResultMessage({ toolCallId: "call_r", name: "research", result: jobAcknowledgement({ id: "job_1", kind: "research" }) }, 3_000)
const steer = buildSubagentSteer(
  { id: "job_1", kind: "research", toolCallId: "call_r" },
  { brief: "**Sigma.js v3** renders with WebGL.", sources: [{ title: "Sigma.js v3: what changed", url: "https://example.com/v3" }] },
  4_000
)
const transcript: ReadonlyArray<ChatMessage> = [user, asking, transcribed, refused, acknowledged, steer]

const render = (message: UiMessage, activity?: TurnActivity, streaming = false) => {
  const item = createElement(MessageItem, { message, streaming })
  return renderToStaticMarkup(activity === undefined ? item : createElement(TurnActivityContext, { value: activity }, item))
}

/** An assistant message with one tool part. */
const withTool = (part: ToolPart): UiMessage => ({ id: "m_tool", role: "assistant", parts: [part as never], metadata: { timestamp: 5_000 } })

describe("the chat's messages as UIMessages", () => {
  it("are the domain's toUiMessages of the transcript: each result folded into its call's part", () => {
    const ui = uiMessagesOf(transcript, null)
    const expected = toUiMessages(transcript)
    assert.deepStrictEqual(ui.map((m) => m.id), ["m_user", "m_ask", steer.id])
    assert.deepStrictEqual(ui[0], expected[0])
    assert.deepStrictEqual(ui[2], expected[2])
    const tools = ui[1]!.parts.filter((part) => part.type.startsWith("tool-"))
    assert.deepInclude(tools[0], { type: "tool-transcribe_video", state: "output-available", output: { text: "Transcript of clip.webm" } })
    // The one addition: the call's input that was not an object, as the model gave it.
    assert.deepInclude(tools[1], { type: "tool-transcribe_video", state: "output-error", errorText: "invalid arguments", input: "not json" })
    assert.deepInclude(tools[2], { type: "tool-research", state: "output-available" })
  })

  it("keeps a message's UIMessage while it and its results are unchanged; the streaming one's text is streaming", () => {
    const first = uiMessagesOf([user, asking], null)
    assert.deepInclude(first[1]!.parts.find((p) => p.type === "tool-transcribe_video"), { state: "input-available" })
    const again = uiMessagesOf([user, asking, transcribed], null)
    assert.strictEqual(again[0], first[0], "the user's message: the same object")
    assert.notStrictEqual(again[1], first[1], "the call's result arrived: its message is new")

    const draft: ChatMessage = { id: "m_draft", role: "assistant", content: "Once upon", timestamp: 6_000 }
    const streaming = uiMessagesOf([user, draft], "m_draft")
    assert.strictEqual(streaming[0], first[0])
    assert.deepStrictEqual(streaming[1]!.parts, [{ type: "step-start" }, { type: "text", text: "Once upon", state: "streaming" }])
    assert.deepInclude(uiMessagesOf([user, draft], null)[1]!.parts[1], { state: "done" })
  })
})

describe("one component per part type", () => {
  const [userUi, askUi, steerUi] = uiMessagesOf(transcript, null)

  it("the user's text in a bubble, plain; the answer's as markdown", () => {
    const html = render(userUi!)
    assert.include(html, 'class="msg msg-user"')
    assert.include(html, '<div class="msg-bubble">Please transcribe my clip</div>')
    assert.notInclude(html, "data-md")
    assert.include(render(askUi!), "Let me transcribe that.")
  })

  it("a tool part with its output, its error; a job's call as its dispatch card", () => {
    const html = render(askUi!)
    assert.include(html, 'aria-label="Tool transcribe_video: Done"')
    assert.include(html, "Transcript of clip.webm")
    assert.include(html, "assetId: &quot;clip&quot;")
    assert.include(html, 'aria-label="Tool transcribe_video: Failed"')
    assert.include(html, '<p class="tool-error">invalid arguments</p>')
    assert.include(html, "<code>not json</code>")
    assert.include(html, 'data-tool-call-id="call_r"')
    assert.include(html, "What changed in Sigma.js v3?")
    // The answer's text, then the cards in one column.
    assert.isBelow(html.indexOf("Let me transcribe"), html.indexOf('class="msg-tools"'))
    assert.strictEqual(html.split('class="msg-tools"').length, 2)
  })

  it("a call still without its result: running, waiting or not run, by the turn's activity; its input arriving", () => {
    const part: ToolPart = { type: "tool-transcribe_video", toolCallId: "call_x", state: "input-available", input: {} }
    assert.include(render(withTool(part)), 'aria-label="Tool transcribe_video: Not run"')
    assert.include(render(withTool(part), { running: true, activeTool: "transcribe_video" }), 'aria-label="Tool transcribe_video: Running…"')
    assert.include(render(withTool(part), { running: true, activeTool: null }), 'aria-label="Tool transcribe_video: Waiting"')
    assert.include(render(withTool({ ...part, state: "input-streaming" })), 'aria-label="Tool transcribe_video: Preparing…"')
  })

  it("the approval states: awaiting, approved, denied with its reason", () => {
    const part: ToolPart = { type: "dynamic-tool", toolName: "delete_scene", toolCallId: "call_d", state: "approval-requested", input: { sceneId: "s1" }, approval: { id: "ap_1" } }
    const asked = render(withTool(part))
    assert.include(asked, 'aria-label="Tool delete_scene: Awaiting approval"')
    assert.include(asked, "sceneId: &quot;s1&quot;")
    assert.notInclude(asked, "<button")
    assert.include(render(withTool({ ...part, state: "approval-responded", approval: { id: "ap_1", approved: true } })), "Tool delete_scene: Approved")
    assert.include(
      render(withTool({ ...part, state: "approval-responded", approval: { id: "ap_1", approved: false, reason: "keep it" } })),
      "Denied: keep it"
    )
    const denied = render(withTool({ ...part, state: "output-denied", approval: { id: "ap_1", approved: false, reason: "not now" } }))
    assert.include(denied, 'aria-label="Tool delete_scene: Denied"')
    assert.include(denied, "Denied: not now")
  })

  it("a steer: its artifact as one result card, never the user's bubble nor the model's copy of it", () => {
    const html = render(steerUi!)
    assert.include(html, 'class="msg msg-steer"')
    assert.strictEqual(html.split('class="job-card steer-card').length, 2)
    assert.include(html, 'data-steer-job-id="job_1"')
    assert.include(html, "Research result")
    assert.include(html, "Sigma.js v3: what changed")
    assert.notInclude(html, "msg-bubble")
    assert.notInclude(html, steer.content.slice(0, 40))

    // Without a valid artifact, the steer's text is its card.
    const bare: UiMessage = { ...steerUi!, parts: steerUi!.parts.filter((part) => part.type === "text") }
    const text = render(bare)
    assert.strictEqual(text.split('class="job-card steer-card').length, 2)
    assert.include(text, "steer-card--text")
  })

  it("an answer streaming in: the typing mark until its text arrives", () => {
    const empty: UiMessage = { id: "m_draft", role: "assistant", parts: [{ type: "step-start" }], metadata: { timestamp: 1 } }
    assert.include(render(empty, undefined, true), '<p class="msg-typing">…</p>')
    const stopped: UiMessage = { ...empty, parts: [{ type: "text", text: "Once", state: "done" }], metadata: { timestamp: 1, stopped: true } }
    const html = render(stopped)
    assert.include(html, "Stopped")
    assert.notInclude(html, "msg-typing")
  })
})

describe("a kind an operator defined", () => {
  const asking: ChatMessage = {
    id: "m_digest",
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "call_d", name: "digest", args: { topic: "WebGL graph rendering" } },
      { id: "call_f", name: "flaky", args: { subject: "anything" } }
    ],
    timestamp: 2_000
  }
  const acks = [
    toolResultMessage({ toolCallId: "call_d", name: "digest", result: jobAcknowledgement({ id: "job_d", kind: "digest" }) }, 3_000),
    toolResultMessage({ toolCallId: "call_f", name: "flaky", result: jobAcknowledgement({ id: "job_f", kind: "flaky" }) }, 3_000)
  ]
  const result = {
    headline: "Sigma.js draws **graphs** with WebGL",
    summary: "## In short\n\n- one program per node type\n- `TypeScript` throughout",
    points: ["fast", "typed"],
    sources: [{ title: "Release notes", url: "https://example.com/v3" }],
    confidence: 0.8,
    reviewed: false,
    extra: {}
  }

  it("its call is a dispatch card once the server acknowledged it, and before only when the agent names the kind", () => {
    const [ui] = uiMessagesOf([asking, ...acks], null)
    const html = render(ui!)
    assert.include(html, 'data-tool-call-id="call_d"')
    assert.include(html, 'data-tool-call-id="call_f"')
    assert.include(html, "WebGL graph rendering")
    assert.include(html, "job-kind--defined")
    assert.notInclude(html, "tool-card")

    // Not answered yet: a client tool's card, unless the chat's agent names the kind.
    const [pending] = uiMessagesOf([asking], null)
    assert.notInclude(render(pending!), "data-tool-call-id")
    const named = renderToStaticMarkup(
      createElement(AgentJobKinds, { value: ["digest"] }, createElement(MessageItem, { message: pending!, streaming: false }))
    )
    assert.include(named, 'data-tool-call-id="call_d"')
    assert.notInclude(named, 'data-tool-call-id="call_f"')
    // An answer that is no acknowledgement (an error, a client's result) is not a job's.
    const [errored] = uiMessagesOf([asking, toolResultMessage({ toolCallId: "call_d", name: "digest", error: "invalid arguments" }, 3_000)], null)
    assert.include(render(errored!), 'aria-label="Tool digest: Failed"')
  })

  it("its result: a tree of what its sub-agent submitted, keys bold, text as markdown, lists nested", () => {
    const [ui] = uiMessagesOf([buildSubagentSteer({ id: "job_d", kind: "digest", toolCallId: "call_d" }, result, 4_000)], null)
    const html = render(ui!)
    assert.include(html, "steer-card--defined")
    assert.include(html, 'data-kind="digest"')
    assert.include(html, "digest result")
    assert.include(html, '<strong class="result-tree__key">headline:</strong> Sigma.js draws <strong>graphs</strong> with WebGL')
    // A text of several lines is its markdown, under its key.
    assert.include(html, '<p class="brief-text__heading"><strong>In short</strong></p>')
    assert.include(html, "<code>TypeScript</code>")
    assert.include(html, '<ul class="result-tree__items"><li>fast</li><li>typed</li></ul>')
    assert.include(html, '<a href="https://example.com/v3" target="_blank" rel="noopener noreferrer">https://example.com/v3</a>')
    assert.include(html, '<span class="result-tree__scalar">0.8</span>')
    assert.include(html, '<span class="result-tree__scalar">false</span>')
    assert.include(html, "(empty)")
    assert.notInclude(html, "steer-card__failure")
  })

  it("its failure `{ error }`: the failure card with the reason", () => {
    const failed = buildSubagentSteer({ id: "job_f", kind: "flaky", toolCallId: "call_f" }, { error: "the sub-agent answered without calling submit_result" }, 4_000)
    const html = render(uiMessagesOf([failed], null)[0]!)
    assert.include(html, "steer-card--failed")
    assert.include(html, "flaky failed")
    assert.include(html, '<p class="steer-card__failure">the sub-agent answered without calling submit_result</p>')
    assert.notInclude(html, "result-tree")
  })
})
