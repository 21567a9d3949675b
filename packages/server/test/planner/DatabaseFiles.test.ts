/**
 * "No plaintext key, host token, ADMIN_TOKEN or CREDENTIAL_KEY anywhere in
 * the database files": a server on an embedded database persisted in a
 * temporary DATA_DIR registers a host, stores a provider profile and makes a
 * decision with it; once the database is closed, every byte of its files is
 * searched. A marker stored in plain text (the task's goal) must be found, so
 * the search can see what the database wrote.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { layerEmbeddedPg } from "../../src/db/EmbeddedPostgres.ts"
import { ADMIN_TOKEN, CREDENTIAL_KEY, client, decisionBody, layerPlannerReplica, plannerEnv } from "../support/ControlPlane.ts"
import { FakeOpenAi } from "@switchboard/providers/testing"
import { baseUrl } from "../support/TestServer.ts"

// These tests start their own database inside the test: on a loaded machine the embedded one takes a while.
const STARTS_A_DATABASE = 120_000

const PROVIDER_KEY = "sk-on-disk-check-0b7d93e1"
const MARKER = "goal-marker-plaintext-5f2c"

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })

describe("the database files", () => {
  it.live("hold no provider key, host token, ADMIN_TOKEN or CREDENTIAL_KEY", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "switchboard-files-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const fake = yield* FakeOpenAi.scoped({ apiKey: PROVIDER_KEY })
      fake.respondWith(() => FakeOpenAi.reply.toolCalls([{ name: "click", arguments: "{\"x\":1,\"y\":1}" }]))

      const hostToken = yield* Effect.scoped(Effect.gen(function*() {
        const server = yield* Layer.build(layerPlannerReplica(layerEmbeddedPg(join(dir, "pgdata")), plannerEnv()))
        const c = client(yield* baseUrl.pipe(Effect.provide(server)))
        const host = yield* c.addHost()
        yield* c.addTask(MARKER, host.hostId)
        const task = yield* c.claim(host)
        yield* c.activate(yield* c.addProfile({
          name: "disk", provider: "openai-compatible", model: "m", timeoutMs: 5_000, baseUrl: fake.url, apiKey: PROVIDER_KEY
        }))
        const res = yield* c.decision(host.token, decisionBody(host, task))
        assert.strictEqual(res.status, 200, res.text)
        return host.token
      }))

      const files = filesUnder(dir)
      assert.isAbove(files.length, 10)
      const contents = files.map((f) => readFileSync(f))
      assert.isTrue(contents.some((b) => b.includes(MARKER)), "the search sees plain text the database stored")
      for (const secret of [PROVIDER_KEY, hostToken, ADMIN_TOKEN, CREDENTIAL_KEY]) {
        const found = files.filter((_, i) => contents[i]!.includes(secret))
        assert.deepStrictEqual(found, [], `a secret in ${found.join(", ")}`)
      }
      const rawKey = Buffer.from(CREDENTIAL_KEY, "base64")
      assert.isFalse(contents.some((b) => b.includes(rawKey)), "nor CREDENTIAL_KEY's bytes")
    }).pipe(Effect.scoped), STARTS_A_DATABASE)
})
