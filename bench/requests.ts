/**
 * The requests the cases send, and what a right answer to each is: every case checks one answer
 * before it measures, so that a broken route is reported as such and not measured as a fast one.
 */

export const BENCH_MESSAGES = [{ id: "u1", role: "user", content: "hello", timestamp: 1 }]
export const CHAT_BODY = JSON.stringify({ messages: BENCH_MESSAGES })
export const COMPLETION_BODY = JSON.stringify({ model: "bench", messages: [{ role: "user", content: "hello" }] })
const runId = Date.now().toString(36)
let chatSeq = 0
export const newChatBody = () => JSON.stringify({ chatId: `bench-${runId}-${++chatSeq}`, messages: BENCH_MESSAGES })

export const checkCompletion = (status: number, text: string) =>
  status === 200 && (JSON.parse(text) as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content === "ok"
    ? undefined
    : `expected 200 with the completion "ok"`
export const checkChatAnswer = (status: number, text: string) => {
  if (status !== 200) return "expected 200"
  const body = JSON.parse(text) as { content?: unknown; messageId?: unknown }
  return body.content === "ok" && typeof body.messageId === "string" ? undefined : `expected { content: "ok", messageId }`
}
