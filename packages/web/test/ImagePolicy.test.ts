/**
 * The console's image policy (src/chat/ImagePolicy.ts) and how it reads who a token names
 * (src/api/Session.ts `identityOf`), without a browser: which image addresses may load, the
 * origins read from the server's `<meta>`, and a JWT's `sub` read for display only.
 */
import { assert, describe, it } from "vitest"
import { identityOf, ownerOf } from "../src/api/Session.ts"
import { imageLinkHref, imageMayLoad, readImageOrigins } from "../src/chat/ImagePolicy.ts"

const PAGE = "https://console.example/chats/c1"
const ALLOWED = ["https://images.example.com", "http://127.0.0.1:9000"]

const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url")

describe("which images may load", () => {
  it.each([
    ["/logo.png", true],
    ["https://console.example/x.png", true],
    ["data:image/png;base64,iVBORw0KGgo=", true],
    ["blob:https://console.example/6c1f0e9a", true],
    ["https://images.example.com/a/b.png?x=1", true],
    ["http://127.0.0.1:9000/pixel.png", true],
    ["https://elsewhere.example/?q=secret", false],
    ["//elsewhere.example/x.png", false],
    ["http://console.example/x.png", false],
    ["https://images.example.com:8443/x.png", false],
    ["http://127.0.0.1:9001/pixel.png", false],
    ["blob:https://elsewhere.example/6c1f0e9a", false],
    ["javascript:alert(1)", false],
    ["ftp://images.example.com/x.png", false],
    ["https://[bad", false]
  ])("%s → %s", (src, expected) => {
    assert.strictEqual(imageMayLoad(src, PAGE, ALLOWED), expected)
  })

  it("a link to one that may not: http(s) only", () => {
    assert.strictEqual(imageLinkHref("//elsewhere.example/x.png", PAGE), "https://elsewhere.example/x.png")
    assert.isUndefined(imageLinkHref("cid:part1", PAGE))
  })

  it("the origins of the server's <meta>: exact origins only; none without it", () => {
    const doc = (content: string | undefined) => ({
      querySelector: () => (content === undefined ? null : { getAttribute: () => content })
    }) as unknown as Pick<Document, "querySelector">
    assert.deepStrictEqual(readImageOrigins(doc("https://images.example.com http://127.0.0.1:9000")), ALLOWED)
    assert.deepStrictEqual(readImageOrigins(doc("https://images.example.com/path javascript:x *")), [])
    assert.deepStrictEqual(readImageOrigins(doc(undefined)), [])
    assert.deepStrictEqual(readImageOrigins(undefined), [])
  })
})

describe("who a token names", () => {
  it("a JWT's sub (and expiry), unverified; any other token names no one", () => {
    const jwt = `${part({ alg: "HS256", typ: "JWT" })}.${part({ sub: "alice ünïcode", exp: 2_000_000_000 })}.c2ln`
    assert.deepStrictEqual(identityOf(jwt), { user: "alice ünïcode", expiresAt: 2_000_000_000_000 })
    assert.strictEqual(ownerOf(jwt), "user:alice ünïcode")
    assert.isUndefined(identityOf("chat-token-7d1f2a9c"))
    assert.strictEqual(ownerOf("chat-token-7d1f2a9c"), "shared")
    assert.strictEqual(ownerOf(undefined), "shared")
    assert.isUndefined(identityOf(`${part({ typ: "JWT" })}.${part({ sub: "x" })}.s`))
    assert.isUndefined(identityOf(`${part({ alg: "HS256" })}.${part({ sub: "" })}.s`))
    assert.isUndefined(identityOf(`${part({ alg: "HS256" })}.not-json.s`))
    assert.isUndefined(identityOf("a.b"))
  })
})
