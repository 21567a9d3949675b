/**
 * The real server on an ephemeral 127.0.0.1 port, over a test database and
 * whatever provider Layer the test gives it — so route tests send real HTTP.
 */
import { NodeHttpServer } from "@effect/platform-node"
import type { PgClient } from "@effect/sql-pg"
import { ConfigProvider, Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { HttpRouter, HttpServer } from "effect/http"
import type { ProviderAdapter, Transcriber } from "@switchboard/providers"
import { layerMigrated } from "../../src/db/Database.ts"
import * as JsonErrors from "../../src/http/JsonErrors.ts"
import { createNodeServer } from "../../src/http/NodeServer.ts"
import { makeApp, ROUTER_CONFIG } from "../../src/Server.ts"
import type { SubagentsLayer } from "../../src/Server.ts"
import type { JobsSettings } from "../../src/jobs/JobsConfig.ts"
import { JobsConfig } from "../../src/jobs/JobsConfig.ts"
import { checkDocumented } from "./DocumentedResponses.ts"
import { TestDatabase } from "./TestDatabase.ts"

/**
 * What a test may swap: in the job pipeline, the sub-agents (a fake, by default the real ones) and its
 * settings; and whether the server's body limit is provided.
 */
export interface TestServerOptions<E2 = never, R2 = never> {
  readonly subagents?: SubagentsLayer<E2, R2>
  /** Defaults tuned for tests: short leases and sweeps. */
  readonly jobs?: Partial<JobsSettings>
  /**
   * Serve without the server's body limit (`JsonErrors.layerBodyLimit`), as a caller of
   * `makeApp` that forgets it would: the JSON error layer then applies its own.
   */
  readonly withoutBodyLimit?: boolean
}

const testJobsConfig = (jobs: Partial<JobsSettings> = {}) =>
  JobsConfig.layerTest({ leaseMs: 2_000, sweepMs: 200, ...jobs })

export const layerTestServer = <E, R, E2 = never, R2 = never>(
  provider: Layer.Layer<ProviderAdapter | Transcriber, E, R>,
  env: Record<string, string> = {},
  options: TestServerOptions<E2, R2> = {}
) =>
  HttpRouter.serve(makeApp(provider, options.subagents, testJobsConfig(options.jobs)), {
    disableLogger: true,
    disableListenLog: true,
    routerConfig: ROUTER_CONFIG
  }).pipe(
    Layer.provide(options.withoutBodyLimit === true ? Layer.empty : JsonErrors.layerBodyLimit),
    Layer.provideMerge(TestDatabase),
    Layer.provideMerge(NodeHttpServer.layer(createNodeServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))
  )

/** `http://127.0.0.1:<port>` of the server under test. */
export const baseUrl = HttpServer.HttpServer.use((server) =>
  Effect.succeed(server.address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${server.address.port}`)
)

export interface RawResponse {
  readonly status: number
  readonly contentType: string
  readonly text: string
  readonly json: any
  readonly headers: Headers
}

/**
 * A plain `fetch` against the server: the wire as an independent client sees it.
 * Every answer to a documented operation must be documented (DocumentedResponses.ts).
 */
export const request = (path: string, init?: RequestInit) =>
  Effect.flatMap(baseUrl, (base) => requestAt(base, path, init))

/** The same, against an explicit base URL (one of several replicas). */
export const requestAt = (base: string, path: string, init?: RequestInit) =>
  Effect.gen(function*() {
    return yield* Effect.promise(async (): Promise<RawResponse> => {
      const response = await fetch(base + path, init)
      const text = await response.text()
      let json: unknown = undefined
      try {
        json = JSON.parse(text)
      } catch {
        json = undefined
      }
      const contentType = response.headers.get("content-type") ?? ""
      checkDocumented(init?.method ?? "GET", path, response.status, contentType, json)
      return { status: response.status, contentType, text, json, headers: response.headers }
    })
  })

const jsonInit = (body: unknown, headers: Record<string, string>): RequestInit => ({
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

export const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  request(path, jsonInit(body, headers))

export const postJsonAt = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  requestAt(base, path, jsonInit(body, headers))

/**
 * One server replica on its own port over the given database client (its own
 * pool): several of them over one database behave as replicas behind a load
 * balancer. Migrations run at its start, as in production.
 */
export const layerReplica = <E, R, E2 = never, R2 = never>(
  provider: Layer.Layer<ProviderAdapter | Transcriber, E, R>,
  database: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, unknown>,
  options: TestServerOptions<E2, R2> = {},
  env: Record<string, string> = {}
) =>
  HttpRouter.serve(makeApp(provider, options.subagents, testJobsConfig(options.jobs)), {
    disableLogger: true,
    disableListenLog: true,
    routerConfig: ROUTER_CONFIG
  }).pipe(
    Layer.provide(options.withoutBodyLimit === true ? Layer.empty : JsonErrors.layerBodyLimit),
    Layer.provide(layerMigrated(database)),
    Layer.provideMerge(NodeHttpServer.layer(createNodeServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))
  )
