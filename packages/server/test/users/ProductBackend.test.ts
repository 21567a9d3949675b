/**
 * The README's "Your users" walk-through, as a test: `examples/product-backend.ts` signs in alice
 * and bob, Switchboard trusts its JWKS (`AUTH_JWKS_URL`, `AUTH_ISSUER`, `AUTH_AUDIENCE`) and answers
 * from `examples/scripted-demo.json`; each user's chat "c1" is their own. Also the backend itself:
 * its JWKS, its tokens, its refusals, and the command line that prints how to start Switchboard.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { Scripted } from "@switchboard/providers"
import { Effect } from "effect"
import { decodeJwt, decodeProtectedHeader } from "jose"
import { spawn } from "node:child_process"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll } from "vitest"
import { AUDIENCE, ISSUER, startProductBackend, TOKEN_SECONDS } from "../../../../examples/product-backend.ts"
import { layerTestServer, postJson, request } from "../support/TestServer.ts"

const examples = fileURLToPath(new URL("../../../../examples/", import.meta.url))

// The product's backend, up before the server that is pointed at it.
const backend = await startProductBackend({ port: 0 })
afterAll(() => backend.close())

const signIn = (user: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${backend.origin}/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user })
    })
    return { status: response.status, json: await response.json() as { token: string; expiresIn: number; user: string } }
  })

const get = (path: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${backend.origin}${path}`)
    return { status: response.status, contentType: response.headers.get("content-type") ?? "", text: await response.text() }
  })

const post = (path: string, body: string | Uint8Array) =>
  Effect.promise(async () => {
    const response = await fetch(`${backend.origin}${path}`, { method: "POST", body })
    const text = await response.text()
    return { status: response.status, json: JSON.parse(text) as { error?: string; code?: string } }
  })

const turn = (chatId: string, id: string, content: string) => ({
  chatId,
  messages: [{ id, role: "user", content, timestamp: 1_700_000_000_000 }]
})

describe("examples/product-backend.ts", () => {
  layer(
    layerTestServer(Scripted.layer(join(examples, "scripted-demo.json")), {
      AUTH_JWKS_URL: backend.jwksUrl,
      AUTH_ISSUER: backend.issuer,
      AUTH_AUDIENCE: backend.audience
    }),
    { excludeTestServices: true }
  )("with Switchboard", (it) => {
    it.effect("alice and bob sign in; each one's chat c1 is their own", () =>
      Effect.gen(function*() {
        const alice = yield* signIn("alice")
        assert.strictEqual(alice.status, 200)
        assert.strictEqual(alice.json.user, "alice")
        assert.strictEqual(alice.json.expiresIn, TOKEN_SECONDS)
        // The curl-friendly route gives bob the same kind of token.
        const bobText = yield* get("/token?user=bob&format=text")
        assert.strictEqual(bobText.status, 200)
        const bob = { token: bobText.text.trim() }
        const as = (token: string) => ({ authorization: `Bearer ${token}` })

        const aTurn = yield* postJson("/api/agent/chat", turn("c1", "a1", "alice's plan for Monday"), as(alice.json.token))
        assert.strictEqual(aTurn.status, 200, aTurn.text)
        assert.include(aTurn.json.content, "alice's plan for Monday")
        const bTurn = yield* postJson("/api/agent/chat", turn("c1", "b1", "bob's shopping list"), as(bob.token))
        assert.strictEqual(bTurn.status, 200, bTurn.text)
        assert.include(bTurn.json.content, "bob's shopping list")
        assert.notInclude(bTurn.text, "alice")

        // Each lists only its own chat c1, titled by its own first message.
        const aList = (yield* request("/api/chats", { headers: as(alice.json.token) })).json
        assert.deepStrictEqual(aList.chats.map((c: { chatId: string; title: string }) => [c.chatId, c.title]), [["c1", "alice's plan for Monday"]])
        const bList = (yield* request("/api/chats", { headers: as(bob.token) })).json
        assert.deepStrictEqual(bList.chats.map((c: { chatId: string; title: string }) => [c.chatId, c.title]), [["c1", "bob's shopping list"]])

        // Bob reading "c1" reads his own chat: nothing of alice's.
        const bRead = yield* request("/api/chats/c1/messages", { headers: as(bob.token) })
        assert.strictEqual(bRead.status, 200)
        assert.notInclude(bRead.text, "alice")
        const bMessages = bRead.json.messages as Array<ChatMessage>
        assert.deepStrictEqual(bMessages.map((m) => m.role), ["user", "assistant"])
        assert.strictEqual(bMessages[0]!.content, "bob's shopping list")
        const aMessages = (yield* request("/api/chats/c1/messages", { headers: as(alice.json.token) })).json.messages as Array<ChatMessage>
        assert.strictEqual(aMessages[0]!.content, "alice's plan for Monday")
        assert.notInclude(JSON.stringify(aMessages), "bob")

        // Without a token, or with a token not of this backend's key: 401.
        assert.strictEqual((yield* request("/api/chats")).status, 401)
        const forged = `${alice.json.token.slice(0, -4)}AAAA`
        assert.strictEqual((yield* request("/api/chats", { headers: as(forged) })).status, 401)
      }))
  })

  it.effect("its JWKS and its tokens: ES256 under the served kid, sub the user, the printed iss and aud, 10 minutes", () =>
    Effect.gen(function*() {
      const jwks = yield* get("/.well-known/jwks.json")
      assert.strictEqual(jwks.status, 200)
      assert.match(jwks.contentType, /^application\/json/)
      const keys = (JSON.parse(jwks.text) as { keys: Array<Record<string, string>> }).keys
      assert.strictEqual(keys.length, 1)
      assert.deepInclude(keys[0], { kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: backend.kid })
      assert.notProperty(keys[0], "d", "the public key only")

      const signed = yield* get("/token?user=carol.o_k-1")
      assert.strictEqual(signed.status, 200)
      const { token } = JSON.parse(signed.text) as { token: string }
      assert.deepInclude(decodeProtectedHeader(token), { alg: "ES256", kid: backend.kid })
      const claims = decodeJwt(token)
      assert.deepInclude(claims, { sub: "carol.o_k-1", iss: ISSUER, aud: AUDIENCE })
      assert.strictEqual(claims.exp! - claims.iat!, TOKEN_SECONDS)
      assert.include(backend.switchboardEnv, `AUTH_JWKS_URL=${backend.jwksUrl} AUTH_ISSUER=${ISSUER} AUTH_AUDIENCE=${AUDIENCE}`)
    }))

  it.effect("bad input: 400 with { error, code }; a body over 1 KiB: 413; no such route: 404", () =>
    Effect.gen(function*() {
      for (const [body, code] of [
        ["{\"user\":", "invalid_json"],
        ["", "invalid_json"],
        ["[\"alice\"]", "invalid_request"],
        ["null", "invalid_request"],
        ["{}", "invalid_user"],
        ["{\"user\":42}", "invalid_user"],
        ["{\"user\":\"\"}", "invalid_user"],
        ["{\"user\":\"a b\"}", "invalid_user"],
        ["{\"user\":\"alice/bob\"}", "invalid_user"],
        ["{\"user\":\"ål\"}", "invalid_user"],
        [JSON.stringify({ user: "x".repeat(65) }), "invalid_user"]
      ] as const) {
        const answer = yield* post("/sign-in", body)
        assert.strictEqual(answer.status, 400, body)
        assert.strictEqual(answer.json.code, code, body)
        assert.isString(answer.json.error)
      }
      assert.strictEqual((yield* post("/sign-in", JSON.stringify({ user: "x".repeat(64) }))).status, 200)
      for (const query of ["", "?user=", "?user=a%20b", `?user=${"x".repeat(65)}`, "?user=alice&format=xml"]) {
        const answer = yield* get(`/token${query}`)
        assert.strictEqual(answer.status, 400, query)
        assert.isString(JSON.parse(answer.text).code)
      }
      const large = yield* post("/sign-in", JSON.stringify({ user: "alice", pad: "x".repeat(2_000) }))
      assert.strictEqual(large.status, 413)
      assert.strictEqual(large.json.code, "payload_too_large")
      // Chunked, no content-length: cut off at the bound all the same.
      const chunked = yield* Effect.promise(() =>
        new Promise<number>((resolve, reject) => {
          const req = httpRequest(`${backend.origin}/sign-in`, { method: "POST" }, (res) => {
            res.resume()
            resolve(res.statusCode ?? 0)
          })
          req.on("error", reject)
          req.write(`{"user":"alice","pad":"${"x".repeat(800)}`)
          req.write(`${"x".repeat(800)}"}`)
          req.end()
        })
      )
      assert.strictEqual(chunked, 413)
      assert.strictEqual((yield* get("/sign-in")).status, 405)
      assert.strictEqual((yield* get("/nowhere")).status, 404)
    }))
})

it.live("run as a command: it listens where it is told and prints the line that starts Switchboard", () =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(process.execPath, [join(examples, "product-backend.ts"), "0"], { stdio: ["ignore", "pipe", "inherit"] })),
      (child) => Effect.sync(() => void child.kill())
    )
    const printed = yield* Effect.promise(() =>
      new Promise<string>((resolve, reject) => {
        let output = ""
        child.once("exit", (code) => reject(new Error(`exited (${code}): ${output}`)))
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString("utf8")
          if (output.includes("npm start\n")) resolve(output)
        })
      })
    )
    const line = /^ {2}(AUTH_JWKS_URL=(http:\/\/127\.0\.0\.1:\d+)\/\.well-known\/jwks\.json AUTH_ISSUER=product-backend AUTH_AUDIENCE=switchboard npm start)$/m
      .exec(printed)
    assert.isNotNull(line, printed)
    const origin = line![2]!
    const token = yield* Effect.promise(async () => (await fetch(`${origin}/token?user=alice&format=text`)).text())
    const keys = yield* Effect.promise(async () => (await fetch(`${origin}/.well-known/jwks.json`)).json() as Promise<{ keys: Array<{ kid: string }> }>)
    assert.strictEqual(decodeProtectedHeader(token).kid, keys.keys[0]!.kid)
  }))
