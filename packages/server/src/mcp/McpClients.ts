/**
 * This process's connections to MCP servers, through the official SDK's
 * client over Streamable HTTP: one per agent and server (its URL and headers
 * part of the key, so an agent given a new URL or token connects anew), made
 * on first use and kept for the next turns, at most `MAX_CONNECTIONS` (the
 * least recently used one closed first).
 *
 * A connection keeps the server's tool list for `MCP_TOOLS_TTL_MS`, less when
 * the server says its list changed (`notifications/tools/list_changed`). Any
 * failure drops the connection: the next use connects again, so a server that
 * restarted (its sessions gone) is found again with its new tools. A tool
 * list is only a cache of what the server says, never a rule two replicas
 * could disagree on: each lists for itself.
 *
 * Every request is bounded: `MCP_TIMEOUT_MS`, and the bytes of an answer
 * (`MAX_ANSWER_BYTES`, counted as they arrive, so a huge one is cut, not read).
 */
import type { JsonObject } from "@switchboard/domain"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js"
import { Clock, Context, Data, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { McpTimeoutMsSetting, McpToolsTtlMsSetting } from "./McpSettings.ts"

/** Connections kept at most (each holds a socket for the server's notifications). */
export const MAX_CONNECTIONS = 256

/** The most bytes one answer of a server may have (a tool result is bounded again, smaller, when stored). */
export const MAX_ANSWER_BYTES = 2 * 1024 * 1024

/** The most tools listed of one server (pages of `tools/list` followed until then). */
export const MAX_LISTED_TOOLS = 512

/** Which server, for whom: the agent's name, the server's name and URL, its opened headers. */
export interface McpTarget {
  readonly agent: string
  readonly server: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
}

/** Why a request to a server failed: what the model reads (never a header's value). */
export class McpFailure extends Data.TaggedError("McpFailure")<{
  readonly reason: "timeout" | "unreachable" | "too_large"
  readonly message: string
}> {}

interface Connection {
  readonly client: Client
  tools: ReadonlyArray<Tool> | undefined
  listedAt: number
  /** Set by the server's `list_changed`: the next use lists again. */
  stale: boolean
}

class TooLarge extends Error {
  constructor(limit: number) {
    super(`the server's answer is over ${limit} bytes`)
  }
}
/** Counts an answer's bytes as they arrive; past `limit` the body fails (and the request with it). */
const boundedFetch = (limit: number): typeof fetch => async (input, init) => {
  const response = await fetch(input, init)
  // A GET is the server's notification stream: long-lived, its events are small, none is a result.
  if (response.body === null || (init?.method ?? "GET").toUpperCase() === "GET") return response
  let seen = 0
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength
        if (seen > limit) controller.error(new TooLarge(limit))
        else controller.enqueue(chunk)
      }
    })
  )
  return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers })
}



const keyOf = (target: McpTarget) =>
  [target.agent, target.server, target.url, createHash("sha256").update(JSON.stringify(target.headers)).digest("hex")].join("\u0000")

/** `text` with every header value of `target` blotted out (no error message should hold one; none may reach the model). */
const withoutSecrets = (text: string, headers: Readonly<Record<string, string>>) =>
  Object.values(headers).filter((value) => value.length >= 4).reduce((t, value) => t.split(value).join("[redacted]"), text)

/** A thrown SDK or network error as what the model reads; a header's value is never in it. */
const failureOf = (target: McpTarget, what: string, timeoutMs: number) => (error: unknown): McpFailure => {
  const server = target.server
  const thrown = error instanceof Error ? error : new Error(String(error))
  const cause = Object.assign(new Error(withoutSecrets(thrown.message, target.headers)), {
    name: thrown.name,
    cause: thrown.cause,
    code: (thrown as { code?: unknown }).code
  })
  if (thrown instanceof TooLarge || thrown.cause instanceof TooLarge) {
    return new McpFailure({ reason: "too_large", message: `${server}: ${what}: ${cause.message}` })
  }
  const code = (cause as { code?: unknown }).code
  if (code === -32001 || cause.name === "TimeoutError" || /timed? ?out/i.test(cause.message)) {
    return new McpFailure({ reason: "timeout", message: `${server}: ${what} timed out after ${timeoutMs} ms` })
  }
  return new McpFailure({ reason: "unreachable", message: `${server}: ${what} failed: ${cause.message.slice(0, 300)}` })
}

export class McpClients extends Context.Service<McpClients, {
  /** The server's tools: its cached list, or listed now (connecting first when needed). */
  tools(target: McpTarget): Effect.Effect<ReadonlyArray<Tool>, McpFailure>
  /** Calls `tool` with `args`; the server's own error is a result with `isError`, not a failure. */
  call(target: McpTarget, tool: string, args: JsonObject): Effect.Effect<CallToolResult, McpFailure>
}>()("switchboard/server/mcp/McpClients") {
  static readonly layer = Layer.effect(McpClients, Effect.gen(function*() {
    const timeoutMs = yield* McpTimeoutMsSetting.config
    const ttlMs = yield* McpToolsTtlMsSetting.config
    // Insertion order is use order: a used connection is moved to the end.
    const connections = new Map<string, Promise<Connection>>()
    // Connections used before: a failure on one may be its session gone stale (the server restarted).
    const reused = new WeakSet<Promise<Connection>>()

    const close = (key: string, connection: Promise<Connection>) => {
      if (connections.get(key) === connection) connections.delete(key)
      connection.then((c) => c.client.close(), () => undefined).catch(() => undefined)
    }

    yield* Effect.addFinalizer(() =>
      Effect.promise(() => Promise.allSettled([...connections.values()].map((c) => c.then((x) => x.client.close()))))
    )

    const connect = async (target: McpTarget, signal: AbortSignal): Promise<Connection> => {
      const connection: Connection = {
        client: new Client({ name: "switchboard", version: "1" }, {
          listChanged: {
            // Marked only: the next turn lists again, on its own deadline.
            tools: { autoRefresh: false, debounceMs: 0, onChanged: () => void (connection.stale = true) }
          }
        }),
        tools: undefined,
        listedAt: 0,
        stale: true
      }
      // A broken notification stream (the server restarted, its sessions gone) may have hidden a
      // change: the next turn lists again, and a listing that fails connects anew.
      connection.client.onerror = () => void (connection.stale = true)
      const transport = new StreamableHTTPClientTransport(new URL(target.url), {
        requestInit: { headers: { ...target.headers } },
        fetch: boundedFetch(MAX_ANSWER_BYTES)
      })
      await connection.client.connect(transport, { timeout: timeoutMs, signal })
      return connection
    }

    /** The target's connection (made, or being made, by whichever use came first). */
    const connectionOf = (target: McpTarget) =>
      Effect.tryPromise({
        try: async (signal) => {
          const key = keyOf(target)
          let pending = connections.get(key)
          if (pending === undefined) {
            // Not the caller's signal: a connection outlives the turn that made it.
            const made = connect(target, AbortSignal.timeout(timeoutMs))
            pending = made
            connections.set(key, made)
            made.catch(() => close(key, made))
            while (connections.size > MAX_CONNECTIONS) {
              const [oldestKey, oldest] = connections.entries().next().value!
              close(oldestKey, oldest)
            }
          } else {
            connections.delete(key)
            connections.set(key, pending)
          }
          const fresh = !reused.has(pending)
          reused.add(pending)
          // The caller may stop waiting (its turn interrupted); the connection is made all the same.
          const abandoned = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }))
          abandoned.catch(() => undefined)
          return { key, pending, fresh, connection: await Promise.race([pending, abandoned]) }
        },
        catch: failureOf(target, "connecting", timeoutMs)
      })

    const tools = (target: McpTarget): Effect.Effect<ReadonlyArray<Tool>, McpFailure> =>
      listOnce(target).pipe(
        // Listing is safe to repeat: a kept connection that fails (its session gone with a restart) is made anew once.
        Effect.catchIf((failure) => failure.retry, () => listOnce(target)),
        Effect.mapError(({ failure }) => failure)
      )

    const listOnce = (target: McpTarget) =>
      Effect.gen(function*() {
        const { connection, fresh, key, pending } = yield* connectionOf(target).pipe(
          Effect.mapError((failure) => ({ failure, retry: false }))
        )
        const now = yield* Clock.currentTimeMillis
        if (connection.tools !== undefined && !connection.stale && now - connection.listedAt < ttlMs) return connection.tools
        connection.stale = false
        const listed = yield* Effect.tryPromise({
          try: async (signal) => {
            const all: Array<Tool> = []
            let cursor: string | undefined
            do {
              const page = await connection.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs, signal })
              all.push(...page.tools)
              cursor = page.nextCursor
            } while (cursor !== undefined && all.length < MAX_LISTED_TOOLS)
            return all.slice(0, MAX_LISTED_TOOLS)
          },
          catch: failureOf(target, "listing its tools", timeoutMs)
        }).pipe(
          Effect.tapError(() => Effect.sync(() => close(key, pending))),
          Effect.mapError((failure) => ({ failure, retry: !fresh && failure.reason === "unreachable" }))
        )
        connection.tools = listed
        connection.listedAt = now
        return listed
      })

    const call = (target: McpTarget, tool: string, args: JsonObject) =>
      Effect.gen(function*() {
        const { connection, key, pending } = yield* connectionOf(target)
        return yield* Effect.tryPromise({
          try: (signal) =>
            connection.client.callTool({ name: tool, arguments: { ...args } }, undefined, { timeout: timeoutMs, signal }) as Promise<
              CallToolResult
            >,
          catch: failureOf(target, `calling ${tool}`, timeoutMs)
        }).pipe(Effect.tapError((failure) =>
          // A timeout says nothing of the connection; anything else may have broken it.
          failure.reason === "timeout" ? Effect.void : Effect.sync(() => close(key, pending))
        ))
      })

    return McpClients.of({ tools, call })
  }))
}
