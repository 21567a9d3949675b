/**
 * Driving the host control plane and the planner proxy over real HTTP, as an
 * operator and a host agent would: the server under test with the
 * environment the planner needs (ADMIN_TOKEN, CREDENTIAL_KEY), its log lines
 * captured, and helpers for the usual steps (register a host, queue and claim
 * a task, create and activate a profile, ask for a decision).
 */
import { NodeHttpServer } from "@effect/platform-node"
import type { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Effect, Layer, Logger, References } from "effect"
import { HttpRouter } from "effect/http"
import { SqlClient } from "effect/sql"
import { createServer } from "node:http"
import { randomBytes } from "node:crypto"
import { layerMigrated } from "../../src/db/Database.ts"
import * as JsonErrors from "../../src/http/JsonErrors.ts"
import type { ProviderAdapter, Transcriber } from "@switchboard/providers"
import { makeApp } from "../../src/Server.ts"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { makeTestDatabase, TestDatabase } from "./TestDatabase.ts"
import { baseUrl, postJsonAt, requestAt } from "./TestServer.ts"
import type { RawResponse } from "./TestServer.ts"

export const ADMIN_TOKEN = `admin-${randomBytes(16).toString("hex")}`
export const newCredentialKey = () => randomBytes(32).toString("base64")
export const CREDENTIAL_KEY = newCredentialKey()

export const plannerEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  ADMIN_TOKEN,
  CREDENTIAL_KEY,
  ...extra
})

/** Every log line the servers of a test file wrote (JSON, one per entry, causes included). */
export const logLines: Array<string> = []

const captureLogs = Layer.mergeAll(
  Logger.layer([Logger.map(Logger.formatJson, (line) => void logLines.push(line))]),
  Layer.succeed(References.MinimumLogLevel, "Debug")
)

const serve = <E, R>(provider: Layer.Layer<ProviderAdapter | Transcriber, E, R>) =>
  HttpRouter.serve(makeApp(provider), { disableLogger: true, disableListenLog: true }).pipe(Layer.provide(JsonErrors.layerBodyLimit))

/** The server on an ephemeral port over a fresh test database; provides `SqlClient` for inspecting it. */
export const layerPlannerServer = (
  env: Record<string, string> = plannerEnv(),
  provider: Layer.Layer<ProviderAdapter | Transcriber> = makeFakeProvider().layer
) =>
  serve(provider).pipe(
    Layer.provideMerge(TestDatabase),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(captureLogs),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))
  )

/** One replica over a given database client, with its own environment (e.g. another CREDENTIAL_KEY). */
export const layerPlannerReplica = (
  database: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, unknown>,
  env: Record<string, string> = plannerEnv(),
  provider: Layer.Layer<ProviderAdapter | Transcriber> = makeFakeProvider().layer
) =>
  serve(provider).pipe(
    Layer.provide(layerMigrated(database)),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(captureLogs),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))
  )

/**
 * Replicas over one fresh database, each with its own environment and (on
 * PostgreSQL) its own pool; on PGlite they share its one connection. Also
 * answers a `SqlClient` context for inspecting the database.
 */
export const startReplicas = (envs: ReadonlyArray<Record<string, string>>, provider?: Layer.Layer<ProviderAdapter | Transcriber>) =>
  Effect.gen(function*() {
    const db = yield* makeTestDatabase
    const memoMap = yield* Layer.makeMemoMap
    const scope = yield* Effect.scope
    const urls: Array<string> = []
    for (const env of envs) {
      const replica = yield* Layer.buildWithMemoMap(layerPlannerReplica(db.client(), env, provider), memoMap, scope)
      urls.push(yield* baseUrl.pipe(Effect.provide(replica)))
    }
    const inspect = yield* Layer.buildWithMemoMap(db.client(), memoMap, scope)
    return { urls, inspect }
  })

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** An operator and a host agent against the server at `base`. */
export const client = (base: string, adminToken: string = ADMIN_TOKEN) => {
  const admin = {
    get: (path: string) => requestAt(base, path, { headers: bearer(adminToken) }),
    post: (path: string, body: unknown = {}) => postJsonAt(base, path, body, bearer(adminToken))
  }
  const expect = (res: RawResponse, status: number, what: string) =>
    res.status === status
      ? Effect.succeed(res.json)
      : Effect.die(new Error(`${what}: expected ${status}, got ${res.status} ${res.text}`))

  const addHost = (name = "host") =>
    admin.post("/admin/hosts", { name }).pipe(
      Effect.flatMap((r) => expect(r, 201, "POST /admin/hosts")),
      Effect.map((j) => j as { hostId: string; token: string })
    )
  const addTask = (goal = "do the thing", hostId?: string) =>
    admin.post("/admin/tasks", hostId === undefined ? { goal } : { goal, hostId }).pipe(
      Effect.flatMap((r) => expect(r, 201, "POST /admin/tasks")),
      Effect.map((j) => (j as { taskId: string }).taskId)
    )
  const addProfile = (profile: Record<string, unknown>) =>
    admin.post("/admin/provider-profiles", profile).pipe(
      Effect.flatMap((r) => expect(r, 201, "POST /admin/provider-profiles")),
      Effect.map((j) => (j as { profileId: string }).profileId)
    )
  const activate = (profileId: string) =>
    admin.post(`/admin/provider-profiles/${profileId}/activate`).pipe(
      Effect.flatMap((r) => expect(r, 200, "activate"))
    )
  const hostPost = (token: string, path: string, body: unknown = {}) => postJsonAt(base, path, body, bearer(token))
  const claim = (host: { hostId: string; token: string }) =>
    hostPost(host.token, `/internal/hosts/${host.hostId}/claim`).pipe(
      Effect.flatMap((r) => expect(r, 200, "claim")),
      Effect.map((j) => (j as { task: { taskId: string; attempt: number; goal: string; leaseExpiresAt: string } }).task)
    )
  const decision = (token: string, body: unknown) => hostPost(token, "/internal/planner/decision", body)
  /** An OpenAI-compatible profile at `baseUrl` made the active one, and a new host holding a task it just claimed. */
  const readyHost = (baseUrl: string, options: { readonly model?: string; readonly host?: string } = {}) =>
    Effect.gen(function*() {
      const profileId = yield* addProfile({
        name: `profile-${randomBytes(6).toString("hex")}`,
        provider: "openai-compatible",
        model: options.model ?? "gpt-planner",
        baseUrl,
        apiKey: "sk-ready-host",
        timeoutMs: 5_000
      })
      yield* activate(profileId)
      const host = yield* addHost(options.host ?? "host")
      yield* addTask("open the settings", host.hostId)
      const task = yield* claim(host)
      return { profileId, host, task }
    })
  return { base, admin, addHost, addTask, addProfile, activate, hostPost, claim, decision, readyHost }
}

export type Client = ReturnType<typeof client>

/** The tools of a typical planner step. */
export const plannerTools = [
  {
    name: "click",
    description: "Click at a point of the screen",
    parameters: { type: "object", properties: { x: { type: "number" }, y: { type: "number" } }, required: ["x", "y"] }
  },
  {
    name: "finish",
    description: "The task is done",
    parameters: { type: "object", properties: { summary: { type: "string" } }, required: ["summary"] }
  }
]

export const decisionBody = (
  host: { hostId: string },
  task: { taskId: string; attempt: number },
  extra: Record<string, unknown> = {}
) => ({
  hostId: host.hostId,
  taskId: task.taskId,
  attempt: task.attempt,
  systemPrompt: "You operate a desktop. Choose one tool per step.",
  userPrompt: "Step 1: open the settings.",
  tools: plannerTools,
  ...extra
})

/** Puts a task's lease in the past, as if its host had gone silent for longer than the lease. */
export const expireLease = (taskId: string) =>
  SqlClient.SqlClient.use((sql) => sql`UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = ${taskId}`)

/**
 * Every row of every table as JSON text (bytea columns appear as `\x…` hex, so
 * a stored plaintext would show in its hex form too), for "this never reached
 * the database" checks.
 */
export const databaseText = SqlClient.SqlClient.use((sql) =>
  Effect.gen(function*() {
    const tables = yield* sql<{ name: string }>`
      SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`
    const parts: Array<string> = []
    for (const { name } of tables) {
      const rows = yield* sql<{ t: string }>`SELECT row_to_json(x)::text AS t FROM ${sql(name)} x`
      parts.push(...rows.map((r) => r.t))
    }
    return { tables: tables.map((t) => t.name), text: parts.join("\n") }
  })
).pipe(Effect.orDie)
