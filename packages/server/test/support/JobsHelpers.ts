/**
 * Helpers shared by the job pipeline's tests: a "teacher" provider script
 * that dispatches jobs and answers acks and steers, and polling on the wire
 * (GET /api/jobs, the transcript) the way a client would.
 */
import type { ChatMessage, JobRecord, ProviderChatParams, ProviderChatResponse } from "@switchboard/domain"
import { subagentResultOf } from "@switchboard/domain"
import { Effect } from "effect"
import { postJson, request } from "./TestServer.ts"

export const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1_700_000_000_000 })

/**
 * The model of these tests: "research <q>" dispatches a research job, "both <q>"
 * a research job and a client `transcribe_video` call; an ack is answered
 * "dispatched", a steer "wake answer: <first line of the steer>", a client
 * tool result "got the transcript".
 */
export const teacher = (params: ProviderChatParams): ProviderChatResponse => {
  const last = params.messages.at(-1)
  const n = params.messages.length
  if (last === undefined) return { content: "nothing to answer" }
  if (last.role === "tool") {
    return last.toolResult?.name === "transcribe_video" ? { content: "got the transcript" } : { content: "dispatched" }
  }
  if (last.role === "user" && subagentResultOf(last) !== undefined) {
    return { content: `wake answer: ${last.content.split("\n")[0]}` }
  }
  const text = last.content
  if (text.startsWith("research ")) {
    return { content: "", toolCalls: [{ id: `call_${n}_0`, name: "research", args: { question: text.slice(9) } }] }
  }
  if (text.startsWith("both ")) {
    return {
      content: "doing both",
      toolCalls: [
        { id: `call_${n}_0`, name: "research", args: { question: text.slice(5) } },
        { id: `call_${n}_1`, name: "transcribe_video", args: {} }
      ]
    }
  }
  return { content: `you said: ${text}` }
}

/** Polls `effect` (real time) until `predicate` holds; fails after `timeoutMs`. */
export const eventually = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  predicate: (a: A) => boolean,
  what: string,
  timeoutMs = 15_000
) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (true) {
      const value = yield* effect
      if (predicate(value)) return value
      if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting for: ${what}`))
      yield* Effect.sleep("20 millis")
    }
  })

export const jobsOf = (chatId: string) =>
  request(`/api/jobs?chatId=${chatId}`).pipe(Effect.map((r) => r.json.jobs as Array<JobRecord>))

export const transcriptOf = (chatId: string) =>
  request(`/api/chats/${chatId}/messages`).pipe(Effect.map((r) => (r.json?.messages ?? []) as Array<ChatMessage>))

export const chat = (chatId: string, messages: ReadonlyArray<ChatMessage>) =>
  postJson("/api/agent/chat", { chatId, messages })

/** Waits until every job of the chat settled; returns them. */
export const settled = (chatId: string, count = 1, timeoutMs?: number) =>
  eventually(
    jobsOf(chatId),
    (jobs) => jobs.length >= count && jobs.every((j) => j.status !== "running"),
    `${count} settled jobs in ${chatId}`,
    timeoutMs
  )
