/**
 * A bounded property test of the request layer: fast-check, seeded
 * and reproducible (`FUZZ_SEED=<n>` replays another run; the seed is printed;
 * `FUZZ_SCALE=<k>` runs k times as many cases).
 *
 * 1. Valid turns, generated from the served document's request schema: the
 *    server accepts each one (the document promises nothing the decoder
 *    refuses) and the transcript holds exactly what was sent.
 * 2. Garbage: random methods, paths, headers and bodies (bytes, broken JSON,
 *    random JSON, near-valid turns, small multipart forms): never a 5xx,
 *    every error JSON `{ error, code }` with no stack trace, and an answer
 *    to a documented operation is documented (DocumentedResponses.ts).
 *
 * Not generated: what Node's HTTP parser refuses before any route (garbage
 * request lines, `Content-Length` with `Transfer-Encoding`,
 * headers over 16 KiB, `Expect`), answered by the node server itself
 * (NodeServer.ts) and tested byte by byte in chat/RequestEdges.test.ts.
 */
import { assert, describe, layer } from "@effect/vitest"
import { AgentContext, BUILT_IN_AGENT, ChatRequest } from "@switchboard/domain"
import { Effect, Schema } from "effect"
import fc from "fast-check"
import { fromSchema, jsonValue } from "../support/DocumentArbitrary.ts"
import { checkDocumented, document } from "../support/DocumentedResponses.ts"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { rawRequest } from "../support/RawHttp.ts"
import { baseUrl, layerTestServer, postJsonAt, requestAt } from "../support/TestServer.ts"

const SEED = Number(process.env.FUZZ_SEED ?? 20261201)
/** Runs per property, multiplied by `FUZZ_SCALE` for a longer hunt by hand (npm test keeps 1). */
const SCALE = Number(process.env.FUZZ_SCALE ?? 1)
const STACK_TRACE = /\n\s+at |node:internal|\.ts:\d+:\d+|\.js:\d+:\d+/

const decodeChatRequest = Schema.decodeUnknownSync(ChatRequest)

const chatBodySchema = (document as any).paths["/api/agent/chat"].post.requestBody.content["application/json"].schema

/** A valid turn with a fresh chat id and distinct message ids, so the stored transcript is predictable. */
/**
 * The document lets a turn name any agent and send any JSON object as `context`; what the server
 * accepts depends on the agent (docs/agents.md): here the built-in's, whose context is an
 * `AgentContext`, generated from that schema's own document.
 */
const agentContextDocument = Schema.toJsonSchemaDocument(AgentContext)
const agentContext = fromSchema({ $defs: agentContextDocument.definitions }, agentContextDocument.schema)

const validTurn = (run: () => number) =>
  fc.tuple(fromSchema(document, chatBodySchema), agentContext).map(([body, context]: [any, unknown]) => {
    const { agent, context: _, ...rest } = body
    const generated = {
      ...rest,
      ...(agent === undefined ? {} : { agent: BUILT_IN_AGENT }),
      ...("context" in body ? { context } : {})
    }
    const n = run()
    // Any documented length (≤ 128) round-trips: the prefix keeps chat ids distinct.
    const chatId = `f${n}.${String(generated.chatId ?? "")}`.slice(0, 128)
    const messages = (generated.messages as Array<Record<string, unknown>>).map((m, i) => ({
      ...m,
      id: `${i}.${[...String(m.id)].slice(0, 190).join("")}`
    }))
    return { ...generated, chatId, messages }
  })

const PATHS = ["/api/agent/chat", "/api/chats/c1/messages", "/api/media/transcriptions", "/healthz", "/readyz", "/openapi.json", "/docs", "/metrics"]

const brokenJson = fc.tuple(jsonValue, fc.nat(), fc.constantFrom("", "{", "}", "]", ",", "\"", ":", "nul", "\\", "\u00ff"))
  .map(([value, cut, noise]) => {
    const text = JSON.stringify({ messages: [{ id: "u", role: "user", content: value, timestamp: 1 }] })
    const at = cut % (text.length + 1)
    return text.slice(0, at) + noise + text.slice(at + 1)
  })

/** A string with a lone UTF-16 surrogate (PostgreSQL cannot store it; refused with a 400). */
const loneSurrogate = fc.tuple(fc.string({ maxLength: 4 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 4 }))
  .map(([before, unit, after]) => before + String.fromCharCode(unit) + after)

/** A valid turn with one field replaced by any JSON, lone surrogates (in values and keys) included. */
const nearValid = fc.tuple(
  fc.constantFrom("messages", "context", "chatId", "id", "role", "content", "timestamp", "toolCalls", "parts", "metadata"),
  fc.oneof(jsonValue, loneSurrogate, fc.dictionary(loneSurrogate, jsonValue, { maxKeys: 2 }))
)
  .map(([field, value]) => {
    const message: Record<string, unknown> = { id: "u1", role: "user", content: "hi", timestamp: 1 }
    const body: Record<string, unknown> = { messages: [message] }
    if (field in message || ["toolCalls", "parts", "metadata"].includes(field)) message[field] = value
    else body[field] = value
    return JSON.stringify(body)
  })

// Forms of up to 8 parts (the route takes 2), empty filenames (`filename=""`, A3), some parts over 64 KiB.
const multipart = fc.tuple(
  fc.array(fc.tuple(
    fc.constantFrom("file", "language", "x"),
    fc.constantFrom("", "a.mp4", "\"q\"", "\"\""),
    fc.oneof({ weight: 9, arbitrary: fc.string({ maxLength: 200 }) }, { weight: 1, arbitrary: fc.constant("z".repeat(70 * 1024)) })
  ), { maxLength: 8 }),
  fc.boolean()
).map(([parts, close]) => {
  const boundary = "fuzzboundary"
  const body = parts.map(([name, filename, data]) =>
    `--${boundary}\r\ncontent-disposition: form-data; name="${name}"${filename === "" ? "" : `; filename=${filename}`}\r\n\r\n${data}\r\n`
  ).join("") + (close ? `--${boundary}--\r\n` : "") // possibly empty
  return { body, contentType: `multipart/form-data; boundary=${boundary}` }
})

const headerValue = fc.string({ unit: "binary-ascii", maxLength: 40 }).map((s) => s.replace(/[^\x20-\x7e]/g, ""))

const garbageRequest = fc.record({
  method: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"),
  path: fc.oneof(
    fc.constantFrom(...PATHS),
    // `;…` suffixes included: the router ignores them, and so does the JSON error layer.
    fc.tuple(fc.constantFrom(...PATHS), fc.string({ unit: "binary-ascii", maxLength: 12 })).map(([p, s]) => p + encodeURI(s).replace(/[?#]/g, "")),
    fc.stringMatching(/^\/api\/chats\/[A-Za-z0-9%._:-]{0,40}\/messages$/u)
  ),
  // Empty bodies included (a JSON 4xx, never the framework's plain-text 415).
  body: fc.oneof(
    fc.uint8Array({ minLength: 0, maxLength: 256 }),
    brokenJson,
    jsonValue.map((v) => JSON.stringify(v)),
    nearValid,
    multipart
  ),
  contentType: fc.option(fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "application/json; charset=utf-8"), { nil: undefined }),
  // Headers Node's parser refuses are not generated (see the top of this file).
  headers: fc.dictionary(fc.constantFrom("accept", "accept-encoding", "authorization", "x-request-id", "if-none-match", "origin"), headerValue, { maxKeys: 3 })
})

describe("fuzz (fast-check, bounded)", () => {
  layer(layerTestServer(makeFakeProvider().layer), { excludeTestServices: true })("requests", (it) => {
    it.effect("valid turns from the document: accepted, and the transcript is exactly what was sent", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        let n = 0
        console.log(`fuzz: valid turns, seed ${SEED} (FUZZ_SEED)`)
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(validTurn(() => n++), async (turn) => {
              // The document is compiled from the domain schemas: what it accepts, they accept.
              decodeChatRequest(turn)
              const res = await Effect.runPromise(postJsonAt(base, "/api/agent/chat", turn))
              if (res.status !== 200) throw new Error(`valid by the document, refused: ${res.status} ${res.text}`)
              const transcript = await Effect.runPromise(requestAt(base, `/api/chats/${turn.chatId}/messages`))
              assert.strictEqual(transcript.status, 200, transcript.text)
              const sent = JSON.parse(JSON.stringify(turn.messages))
              assert.deepStrictEqual(transcript.json.messages.slice(0, -1), sent)
              assert.deepInclude(transcript.json.messages.at(-1), { id: res.json.messageId, role: "assistant", content: "ok" })
            }),
            { numRuns: 40 * SCALE, seed: SEED }
          )
        )
      }))

    it.effect("garbage: never a 5xx; errors are JSON { error, code } without a stack trace", () =>
      Effect.gen(function*() {
        const base = yield* baseUrl
        console.log(`fuzz: garbage, seed ${SEED} (FUZZ_SEED)`)
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(garbageRequest, async (input) => {
              const { body, contentType } = typeof input.body === "object" && !(input.body instanceof Uint8Array)
                ? input.body
                : { body: input.body, contentType: input.contentType }
              const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body
              const sendsBody = !["GET", "HEAD"].includes(input.method)
              const res = await Effect.runPromise(rawRequest(base + input.path, {
                method: input.method,
                headers: { ...input.headers, ...(contentType === undefined ? {} : { "content-type": contentType }) },
                ...(sendsBody ? { body: bytes } : {})
              }))
              const text = res.body.toString("utf8")
              const where = `${input.method} ${input.path} → ${res.status} ${text.slice(0, 200)}`
              if (res.status >= 500) throw new Error(`5xx for input: ${where}`)
              if (STACK_TRACE.test(text)) throw new Error(`stack trace on the wire: ${where}`)
              // A HEAD answer has no body by definition.
              if (res.status >= 400 && input.method !== "HEAD") {
                const json = JSON.parse(text) as { error?: unknown; code?: unknown }
                if (typeof json.error !== "string" || typeof json.code !== "string") throw new Error(`not { error, code }: ${where}`)
                assert.match(String(res.headers["content-type"]), /^application\/json/)
              }
              const json = (() => {
                try {
                  return JSON.parse(text)
                } catch {
                  return undefined
                }
              })()
              checkDocumented(input.method, input.path, res.status, String(res.headers["content-type"] ?? ""), json)
            }),
            { numRuns: 250 * SCALE, seed: SEED }
          )
        )
      }))
  })
})
