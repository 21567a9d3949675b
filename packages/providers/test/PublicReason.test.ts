/**
 * The reason a client is shown for a provider failure (`publicReason`), and
 * the `LLM_MAX_RESPONSE_BYTES` setting. Each reason is also produced against
 * real local fakes, per adapter and transport (`AdapterConformance`); what
 * cannot be produced on loopback alone (a name that does not resolve) is
 * checked here from the error code the transports find in the cause.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderError, publicReason } from "../src/ProviderAdapter.ts"
import { errorCodeOf, networkError, statusError } from "../src/ProviderHttp.ts"
import { DEFAULT_MAX_RESPONSE_BYTES, responseLimitFor } from "../src/ResponseLimit.ts"

describe("publicReason", () => {
  it("names the kind of failure: status_<code>, timeout, invalid_response, too_large, not_configured", () => {
    assert.strictEqual(publicReason(statusError(401, "Incorrect API key provided: sk-…", [])), "status_401")
    assert.strictEqual(publicReason(statusError(503, "<html>down</html>", [])), "status_503")
    assert.strictEqual(publicReason(new ProviderError({ reason: "Timeout", message: "slow" })), "timeout")
    assert.strictEqual(publicReason(new ProviderError({ reason: "InvalidResponse", message: "x" })), "invalid_response")
    assert.strictEqual(publicReason(new ProviderError({ reason: "TooLarge", message: "x" })), "too_large")
    assert.strictEqual(publicReason(new ProviderError({ reason: "NotConfigured", message: "x" })), "not_configured")
  })

  it("a network failure by its system code: refused, reset, dns, else unreachable", () => {
    const dns = Object.assign(new Error("getaddrinfo ENOTFOUND api.example"), { code: "ENOTFOUND" })
    // fetch hides the code two causes down.
    const fetchFailed = new TypeError("fetch failed", { cause: dns })
    assert.strictEqual(errorCodeOf(new Error("Connection error.", { cause: fetchFailed })), "ENOTFOUND")
    assert.strictEqual(publicReason(networkError("x", errorCodeOf(fetchFailed))), "dns")
    assert.strictEqual(publicReason(networkError("x", "EAI_AGAIN")), "dns")
    assert.strictEqual(publicReason(networkError("x", "ECONNREFUSED")), "connection_refused")
    assert.strictEqual(publicReason(networkError("x", "ECONNRESET")), "connection_reset")
    assert.strictEqual(publicReason(networkError("x", "UND_ERR_SOCKET")), "connection_reset")
    assert.strictEqual(publicReason(networkError("x", "EHOSTUNREACH")), "unreachable")
    assert.strictEqual(publicReason(networkError("x")), "unreachable")
  })
})

describe("LLM_MAX_RESPONSE_BYTES", () => {
  it("unset or blank: 4 MiB; a whole number of bytes in range: that", () => {
    assert.deepStrictEqual(responseLimitFor({}), { _tag: "Bytes", bytes: DEFAULT_MAX_RESPONSE_BYTES })
    assert.strictEqual(DEFAULT_MAX_RESPONSE_BYTES, 4 * 1024 * 1024)
    assert.deepStrictEqual(responseLimitFor({ LLM_MAX_RESPONSE_BYTES: " " }), { _tag: "Bytes", bytes: DEFAULT_MAX_RESPONSE_BYTES })
    assert.deepStrictEqual(responseLimitFor({ LLM_MAX_RESPONSE_BYTES: "1048576" }), { _tag: "Bytes", bytes: 1048576 })
  })

  it("anything else is refused in one line naming the variable, the value and what is accepted", () => {
    for (const value of ["4MiB", "0", "12", "-1", "1.5", "999999999999", "268435457"]) {
      const limit = responseLimitFor({ LLM_MAX_RESPONSE_BYTES: value })
      if (limit._tag !== "Invalid") return assert.fail(`${value} accepted`)
      assert.include(limit.message, "LLM_MAX_RESPONSE_BYTES")
      assert.include(limit.message, JSON.stringify(value))
      assert.include(limit.message, "from 1024 to 268435456")
      assert.notInclude(limit.message, "\n")
    }
  })
})
