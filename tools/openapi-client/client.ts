/**
 * A client of Switchboard as an outside team would write it: types generated
 * from the served `/openapi.json` by openapi-typescript
 * (`npm run generate -w tools/openapi-client`), calls through openapi-fetch.
 *
 * `npm run check -w tools/openapi-client` type-checks it (TypeScript 5.9),
 * which proves what the document promises: free-form `args` and `metadata`
 * take any JSON, and the chat route's error union is exactly the codes handled
 * below — one missing or one extra and this file stops compiling.
 *
 * Run with a base URL (`npx node tools/openapi-client/client.ts http://127.0.0.1:8787`), it makes a few
 * calls and prints what it saw as JSON (the server tests read it).
 */
import createClient from "openapi-fetch"
import type { components, paths } from "./generated/switchboard.ts"

type ChatMessage = components["schemas"]["JsonObject"] extends object
  ? paths["/api/agent/chat"]["post"]["requestBody"]["content"]["application/json"]["messages"][number]
  : never

export const makeClient = (baseUrl: string) => createClient<paths>({ baseUrl })

const turn = (client: ReturnType<typeof makeClient>, chatId: string, messages: Array<ChatMessage>) =>
  client.POST("/api/agent/chat", { body: { chatId, messages } })

export type ChatError = NonNullable<Awaited<ReturnType<typeof turn>>["error"]>

/** Every error the chat route documents, by name: the switch is exhaustive over the generated union. */
export const describeChatError = (error: ChatError): string => {
  switch (error.code) {
    case "invalid_request":
      return `fix the request: ${error.error}`
    case "unauthenticated":
      return "set CHAT_TOKEN as the bearer token"
    case "method_not_allowed":
      return "wrong method"
    case "turn_in_flight":
      return `chat ${error.chatId} is busy: retry`
    case "payload_too_large":
      return "send less"
    case "unsupported_media_type":
      return "send JSON"
    case "internal_error":
      return "server bug"
    case "provider_error":
      return `the provider failed (${error.reason ?? error.error})`
    case "provider_not_configured":
      return `the server lacks ${error.missing.join(", ")}`
    case "database_unavailable":
      return "retry later"
    case "not_ready":
      return "the server is starting: retry shortly"
    case "too_many_messages":
      return `send at most ${error.limit} messages (only those the server has not stored)`
    case "agent_not_found":
      return `no agent named ${error.agent}`
    case "agent_mismatch":
      return `the chat is ${error.agent}'s: name that agent or none`
    case "chat_full":
      return `chat ${error.chatId} is full (${error.messages} messages): start another chat`
    case "rate_limited":
      return `too many turns: retry in ${error.retryAfter} s`
    case "overloaded":
      return `the server is busy: retry in ${error.retryAfter} s`
    case "budget_exceeded":
      return `daily tokens used up (${error.used} of ${error.limit}): retry in ${error.retryAfter} s`
    default: {
      const unhandled: never = error
      return unhandled
    }
  }
}

/** A few real calls; what each answered. */
export const exercise = async (baseUrl: string) => {
  const client = makeClient(baseUrl)
  const chatId = `generated-client-${Date.now()}`
  const ok = await turn(client, chatId, [{
    id: "u1",
    role: "user",
    content: "hi",
    timestamp: 1,
    // Free-form values: any JSON per key.
    metadata: { source: "generated-client", nested: { list: [1, "two", null, { three: true }] } },
    toolCalls: [{ id: "call_1", name: "transcribe_video", args: { clipId: "c1", range: [0, 5] } }]
  }])
  const invalid = await turn(client, "not a valid id", [{ id: "u1", role: "user", content: "hi", timestamp: 1 }])
  const unsupported = await client.POST("/api/agent/chat", {
    body: { messages: [{ id: "u1", role: "user", content: "hi", timestamp: 1 }] },
    headers: { "content-type": "text/plain" },
    bodySerializer: (body) => JSON.stringify(body)
  })
  const missing = await client.GET("/api/chats/{chatId}/messages", { params: { path: { chatId: "never-used" } } })
  const transcript = await client.GET("/api/chats/{chatId}/messages", { params: { path: { chatId } } })
  const missingCode = missing.error?.code
  return {
    ok: { status: ok.response.status, content: ok.data?.content, messageId: ok.data?.messageId },
    invalid: { status: invalid.response.status, described: invalid.error ? describeChatError(invalid.error) : undefined },
    unsupported: { status: unsupported.response.status, code: unsupported.error?.code },
    missing: { status: missing.response.status, code: missingCode },
    transcript: transcript.data?.messages.map((m) => ({ id: m.id, metadata: m.metadata, toolCalls: m.toolCalls }))
  }
}

if (process.argv[2] !== undefined) {
  console.log(JSON.stringify(await exercise(process.argv[2])))
}
