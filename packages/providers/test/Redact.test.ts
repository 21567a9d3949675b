import { assert, describe, it } from "@effect/vitest"
import { describeCause, redact } from "../src/Redact.ts"

describe("Redact", () => {
  it("replaces every occurrence of each secret", () => {
    assert.strictEqual(redact("key sk-1 and sk-1 again, other s3", ["sk-1", "s3"]), "key [REDACTED] and [REDACTED] again, other [REDACTED]")
  })

  it("replaces a longer secret whole even when a shorter one is inside it", () => {
    assert.strictEqual(redact("abcdef", ["abc", "abcdef"]), "[REDACTED]")
  })

  it("replaces any bearer token, known or not, whatever its case", () => {
    assert.strictEqual(
      redact("authorization: Bearer sk-unknown-token; bearer xyz", []),
      "authorization: Bearer [REDACTED]; Bearer [REDACTED]"
    )
  })

  it("replaces any x-api-key header value, known or not, but not the bare header name", () => {
    assert.strictEqual(
      redact(`headers {"x-api-key":"sk-ant-unknown"}; X-Api-Key: other-key, x-api-key='k3'; x-api-key=k4`, []),
      `headers {"x-api-key":"[REDACTED]"}; X-Api-Key: [REDACTED], x-api-key='[REDACTED]'; x-api-key=[REDACTED]`
    )
    assert.strictEqual(redact(`{"x-api-key": "sk-known"}`, ["sk-known"]), `{"x-api-key": "[REDACTED]"}`)
    assert.strictEqual(redact("invalid x-api-key", []), "invalid x-api-key")
  })

  it("ignores empty secrets and leaves other text alone", () => {
    assert.strictEqual(redact("nothing to hide", ["", "absent"]), "nothing to hide")
  })

  it("describes a cause chain, redacted", () => {
    const inner = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" })
    const outer = new Error("fetch failed with sk-secret.", { cause: inner })
    assert.strictEqual(describeCause(outer, ["sk-secret"]), "fetch failed with [REDACTED]: connect ECONNREFUSED 127.0.0.1:1")
    assert.strictEqual(
      describeCause(Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }), []),
      "other side closed (UND_ERR_SOCKET)"
    )
    assert.strictEqual(describeCause("plain sk-secret", ["sk-secret"]), "plain [REDACTED]")
  })
})
