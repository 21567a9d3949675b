/**
 * Provider credentials at rest: AES-256-GCM under CREDENTIAL_KEY, the
 * rotation to a new key with CREDENTIAL_KEY_PREVIOUS, and a server whose key
 * is missing or malformed (it starts; profiles cannot be created or used).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted, Result } from "effect"
import { SqlClient } from "effect/sql"
import { CredentialKeys, keyIdOf, open, parseKey, seal } from "../../src/secrets/CredentialKeys.ts"
import { ADMIN_TOKEN, client, decisionBody, newCredentialKey, startReplicas } from "../support/ControlPlane.ts"
import type { Client } from "../support/ControlPlane.ts"
import { FakeOpenAi } from "@switchboard/providers/testing"

// These tests start their own database inside the test: on a loaded machine the embedded one takes a while.
const STARTS_A_DATABASE = 120_000

const PROVIDER_KEY = "sk-rotated-profile-key-77f1e0"

const keyOf = (raw: string) => {
  const slot = parseKey("CREDENTIAL_KEY", raw)
  if (slot._tag !== "Key") throw new Error(slot.reason)
  return slot.key
}

describe("credential keys", () => {
  it("a missing, non-base64 or wrong-length key is refused with a reason naming the variable, never quoting it", () => {
    assert.deepInclude(parseKey("CREDENTIAL_KEY", undefined), { _tag: "Unavailable" })
    const notBase64 = parseKey("CREDENTIAL_KEY", "this is not base64!")
    assert.strictEqual(notBase64._tag, "Unavailable")
    assert.include((notBase64 as { reason: string }).reason, "CREDENTIAL_KEY")
    const short = parseKey("CREDENTIAL_KEY", Buffer.alloc(16, 7).toString("base64"))
    assert.include((short as { reason: string }).reason, "16 bytes")
    assert.notInclude((short as { reason: string }).reason, Buffer.alloc(16, 7).toString("base64"))
    assert.strictEqual(parseKey("CREDENTIAL_KEY", newCredentialKey())._tag, "Key")
  })

  it("sealing: a fresh nonce each time, the profile id bound as associated data, tampering detected", () => {
    const key = keyOf(newCredentialKey())
    const a = seal(key, "prof_a", "sk-secret")
    const b = seal(key, "prof_a", "sk-secret")
    assert.notDeepEqual(Buffer.from(a.nonce), Buffer.from(b.nonce))
    assert.notDeepEqual(Buffer.from(a.ciphertext), Buffer.from(b.ciphertext))
    assert.strictEqual(a.keyId, keyIdOf(key.bytes))
    assert.notInclude(Buffer.from(a.ciphertext).toString("latin1"), "sk-secret")
    assert.strictEqual(open(key, "prof_a", a), "sk-secret")
    assert.isUndefined(open(key, "prof_b", a), "copied onto another profile, it does not open")
    const tampered = { ...a, ciphertext: Buffer.from(a.ciphertext).map((x, i) => i === 0 ? x ^ 1 : x) }
    assert.isUndefined(open(key, "prof_a", tampered))
    assert.isUndefined(open(keyOf(newCredentialKey()), "prof_a", a), "another key does not open it")
  })

  it.effect("a server holding only the old key cannot open a value re-sealed under the new one", () =>
    Effect.gen(function*() {
      const oldRaw = newCredentialKey()
      const newRaw = newCredentialKey()
      const before = CredentialKeys.make(parseKey("CREDENTIAL_KEY", oldRaw), undefined)
      const during = CredentialKeys.make(parseKey("CREDENTIAL_KEY", newRaw), parseKey("CREDENTIAL_KEY_PREVIOUS", oldRaw))
      const sealed = yield* before.seal("prof_r", Redacted.make("sk-r"))
      const resealed = yield* during.reseal("prof_r", sealed)
      assert.strictEqual(resealed.keyId, keyIdOf(keyOf(newRaw).bytes))
      assert.strictEqual(Redacted.value(yield* during.open("prof_r", resealed)), "sk-r")
      const refused = yield* Effect.result(before.open("prof_r", resealed))
      assert.isTrue(Result.isFailure(refused))
      assert.strictEqual(Result.isFailure(refused) ? refused.failure.code : "", "credential_unavailable")
    }))
})

const profileOf = (fake: FakeOpenAi.FakeOpenAi) => ({
  name: "rotating",
  provider: "openai-compatible",
  model: "gpt-rotation",
  timeoutMs: 5_000,
  baseUrl: fake.url,
  apiKey: PROVIDER_KEY
})

const decide = (c: Client, host: { hostId: string; token: string }, task: { taskId: string; attempt: number }) =>
  c.decision(host.token, decisionBody(host, task))

describe("CREDENTIAL_KEY on servers sharing a database", () => {
  it.live("rotation: a profile written under the old key is used, re-encrypted, and used under the new key alone", () =>
    Effect.gen(function*() {
      const oldKey = newCredentialKey()
      const newKey = newCredentialKey()
      const fake = yield* FakeOpenAi.scoped({ apiKey: PROVIDER_KEY })
      fake.respondWith(() => FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":1,\"y\":1}" }]))
      const { inspect, urls } = yield* startReplicas([
        { ADMIN_TOKEN, CREDENTIAL_KEY: oldKey },
        { ADMIN_TOKEN, CREDENTIAL_KEY: newKey, CREDENTIAL_KEY_PREVIOUS: oldKey },
        { ADMIN_TOKEN, CREDENTIAL_KEY: newKey }
      ])
      const [before, during, after] = urls.map((u) => client(u))
      const host = yield* before!.addHost()
      yield* before!.addTask("rotate", host.hostId)
      const task = yield* before!.claim(host)

      const profileId = yield* before!.addProfile(profileOf(fake))
      yield* before!.activate(profileId)
      assert.strictEqual((yield* decide(before!, host, task)).status, 200, "written and used under the old key")

      const newOnlyEarly = yield* decide(after!, host, task)
      assert.strictEqual(newOnlyEarly.status, 503, "the new key alone cannot open it yet")
      assert.strictEqual(newOnlyEarly.json.code, "credential_unavailable")
      assert.include(newOnlyEarly.json.error, "CREDENTIAL_KEY_PREVIOUS")

      assert.strictEqual((yield* decide(during!, host, task)).status, 200, "CREDENTIAL_KEY_PREVIOUS opens it")
      const rotated = yield* during!.admin.post("/admin/provider-profiles/rotate-credential-key")
      assert.strictEqual(rotated.status, 200, rotated.text)
      assert.deepStrictEqual(rotated.json, { keyId: keyIdOf(keyOf(newKey).bytes), reencrypted: 1, alreadyCurrent: 0, undecryptable: [],
        mcpHeaders: { reencrypted: 0, alreadyCurrent: 0, undecryptable: [] }
      })
      const again = yield* during!.admin.post("/admin/provider-profiles/rotate-credential-key")
      assert.deepInclude(again.json, { reencrypted: 0, alreadyCurrent: 1 }, "idempotent")

      const listed = yield* after!.admin.get("/admin/provider-profiles")
      assert.strictEqual(listed.json.profiles[0].credentialKeyId, rotated.json.keyId)
      const used = yield* decide(after!, host, task)
      assert.strictEqual(used.status, 200, "used after the rotation with the new key alone")
      const oldOnly = yield* decide(before!, host, task)
      assert.strictEqual(oldOnly.status, 503, "the old key no longer opens it")

      assert.deepStrictEqual(fake.chatRequests().map((r) => r.headers.authorization), Array(3).fill(`Bearer ${PROVIDER_KEY}`))
      const rows = yield* SqlClient.SqlClient.use((sql) => sql<{ t: string }>`SELECT row_to_json(p)::text AS t FROM provider_profiles p`)
        .pipe(Effect.provide(inspect))
      assert.strictEqual(rows.length, 1)
      for (const secret of [PROVIDER_KEY, oldKey, newKey, Buffer.from(PROVIDER_KEY).toString("hex")]) {
        assert.notInclude(rows[0]!.t, secret)
      }
    }).pipe(Effect.scoped), STARTS_A_DATABASE)

  it.live("missing or malformed CREDENTIAL_KEY: the server starts; creating a profile or deciding is a 503 naming it", () =>
    Effect.gen(function*() {
      const key = newCredentialKey()
      const fake = yield* FakeOpenAi.scoped()
      const { urls } = yield* startReplicas([
        { ADMIN_TOKEN, CREDENTIAL_KEY: key },
        { ADMIN_TOKEN },
        { ADMIN_TOKEN, CREDENTIAL_KEY: "definitely-not-a-key" },
        { CREDENTIAL_KEY: key }
      ])
      const [good, missing, malformed, noAdmin] = urls.map((u) => client(u))
      // (And a replica without ADMIN_TOKEN: every admin route is a 401, whatever the bearer.)
      for (const token of [ADMIN_TOKEN, "", "x"]) {
        const c = client(noAdmin!.base, token)
        assert.strictEqual((yield* c.admin.get("/admin/hosts")).status, 401)
        assert.strictEqual((yield* c.admin.post("/admin/planner-decisions/prune")).status, 401)
        assert.strictEqual((yield* c.admin.post("/admin/hosts", { name: "h" })).json.code, "unauthenticated")
      }
      const host = yield* good!.addHost()
      yield* good!.addTask("x", host.hostId)
      const task = yield* good!.claim(host)
      yield* good!.activate(yield* good!.addProfile(profileOf(fake)))

      for (const [c, why] of [[missing!, "not set"], [malformed!, "malformed"]] as const) {
        const health = yield* c.admin.get("/healthz")
        assert.strictEqual(health.status, 200)
        const create = yield* c.admin.post("/admin/provider-profiles", { ...profileOf(fake), name: `other-${why}` })
        assert.strictEqual(create.status, 503)
        assert.strictEqual(create.json.code, "credential_unavailable")
        assert.include(create.json.error, "CREDENTIAL_KEY")
        assert.include(create.json.error, why)
        assert.notInclude(create.text, "definitely-not-a-key")
        const decision = yield* decide(c, host, task)
        assert.strictEqual(decision.status, 503)
        assert.strictEqual(decision.json.code, "credential_unavailable")
        const rotate = yield* c.admin.post("/admin/provider-profiles/rotate-credential-key")
        assert.strictEqual(rotate.status, 503)
      }
      assert.strictEqual(fake.chatRequests().length, 0)
    }).pipe(Effect.scoped), STARTS_A_DATABASE)
})
