/**
 * The users case as the run measures it: the same turn with a user's JWT and with `CHAT_TOKEN`,
 * alternated on one server of its own (the sign-in and the tokens: `users.ts`).
 */
import type { ChildProcess } from "node:child_process"
import { LoadGenerator } from "./load.ts"
import { backends, options } from "./options.ts"
import { loadFor, phase } from "./phase.ts"
import type { Phase } from "./phase.ts"
import { scratchUrl } from "./postgres.ts"
import { errorLines, startServer, stop } from "./processes.ts"
import type { ServerProcess } from "./processes.ts"
import { fmt, machineNotes, pairsOf, phaseNotes, record } from "./record.ts"
import type { CaseRecord } from "./record.ts"
import { CHAT_BODY, checkChatAnswer, newChatBody } from "./requests.ts"
import { startUsersAuth } from "./users.ts"

/**
 * A user's JWT against the product's own backend token (docs/performance.md, "JWT per turn"): one
 * server with both `AUTH_JWKS_URL` (the ES256 JWKS of `examples/product-backend.ts`, served by this
 * process) and `CHAT_TOKEN`; the same turn sent by the same 32 users (one a connection), as
 * `Authorization: Bearer <the user's JWT>` or as `Bearer $CHAT_TOKEN` + `X-Switchboard-User`. One
 * server for both, so that the process, its database and its JIT are the same and the only
 * difference is how a request's user is known; its CHAT_TOKEN path is a CHAT_TOKEN-only server's
 * (the token is compared first; the JWT verifier never runs).
 *
 * The difference sought (tens of µs) is a few % of a persisted turn's CPU, less than this machine's
 * drift over a minute: so the two alternate in short phases, in ABBA order (JWT, token, token,
 * JWT, …: what one phase leaves to the next, its garbage say, falls on both alike), `USERS_PAIRS`
 * pairs after a warm-up of each, and the figure is the median of the pairs' differences. The
 * persisted turn (a new chatId each, the target's) comes first, then the same turn without a
 * chatId (nothing stored: a smaller turn, so the same difference stands out of less noise).
 */
const USERS_PAIRS = { quick: 6, full: 12 }

export const usersCase = async (upstream: { readonly child: ChildProcess; readonly port: number }, backend: "embedded" | "postgres") => {
  const pairs = options.quick ? USERS_PAIRS.quick : USERS_PAIRS.full
  const phaseMs = Math.max(1_000, options.durationMs / 5)
  console.log(
    `\nusers (${backend}): a turn with a user's JWT (ES256, local JWKS) vs the same turn with CHAT_TOKEN + X-Switchboard-User, ` +
      `one server; ${pairs} pairs of ${fmt(phaseMs / 1000, 1)} s phases, ABBA`
  )
  const auth = await startUsersAuth(options.concurrency)
  let server: ServerProcess | undefined
  const loads: Array<LoadGenerator> = []
  try {
    server = await startServer({
      name: `users server (${backend})`,
      upstreamPort: upstream.port,
      databaseUrl: backend === "postgres" ? scratchUrl : undefined,
      cpuProfDir: options.cpuProfDir,
      env: { ...auth.env, ...options.serverEnv }
    })
    const target = server
    const origin = `http://127.0.0.1:${target.port}`
    const verifyUs = await auth.verifyCpuUs()
    const cpu = (p: Phase) => p.cpuUsPerRequest ?? Number.NaN

    const measure = async (label: string, body: () => string) => {
      const token = await loadFor(`${label} with CHAT_TOKEN`, { origin, path: "/api/agent/chat", body, headers: auth.chatTokenHeaders }, checkChatAnswer)
      loads.push(token)
      const jwt = await loadFor(`${label} with a JWT`, { origin, path: "/api/agent/chat", body, headers: auth.jwtHeaders }, checkChatAnswer)
      loads.push(jwt)
      await phase(token, target.child, upstream.child, options.warmupMs)
      await phase(jwt, target.child, upstream.child, options.warmupMs)
      const tokens: Array<Phase> = []
      const jwts: Array<Phase> = []
      for (let i = 0; i < pairs; i++) {
        const order = i % 2 === 0 ? [jwt, token] : [token, jwt]
        for (const load of order) {
          const p = await phase(load, target.child, upstream.child, phaseMs)
          ;(load === jwt ? jwts : tokens).push(p)
        }
        console.log(
          `    ${label}, pair ${i + 1}/${pairs}: CHAT_TOKEN ${fmt(cpu(tokens[i]!))} µs CPU/turn (${fmt(tokens[i]!.result.rps)} req/s), ` +
            `JWT ${fmt(cpu(jwts[i]!))} µs (${fmt(jwts[i]!.result.rps)} req/s): ${fmt(cpu(jwts[i]!) - cpu(tokens[i]!))} µs`
        )
      }
      return { tokens, jwts }
    }

    const summary = (label: string, entry: CaseRecord) =>
      console.log(
        `  ${label} (${backend}): CHAT_TOKEN ${fmt(entry.floor)} µs CPU/turn, JWT ${fmt(entry.figure)} µs CPU/turn, ` +
          `difference ${entry.vs >= 0 ? "+" : ""}${fmt(entry.vs)} µs (median of ${pairs} pairs; target <= +50 µs: ` +
          `${entry.holds === true ? "holds" : "does NOT hold"}); jose's jwtVerify alone ${fmt(verifyUs)} µs`
      )
    const notes = (tokens: ReadonlyArray<Phase>, jwts: ReadonlyArray<Phase>) => [
      `pairs (JWT − CHAT_TOKEN, µs): ${jwts.map((p, i) => fmt(cpu(p) - cpu(tokens[i]!))).join(", ")}`,
      `jose's jwtVerify of one such token alone, in the bench process (local key set, no HTTP): ${fmt(verifyUs)} µs of CPU`,
      ...phaseNotes("CHAT_TOKEN", tokens),
      ...phaseNotes("JWT", jwts)
    ]

    const stored = await measure("persisted turn", newChatBody)
    const persisted = record({
      id: `users.jwt-cpu.${backend}`, name: "persisted turn (new chatId) with a user's JWT (ES256, JWKS): server CPU per turn", backend, unit: "µs",
      floorName: "the same turn with CHAT_TOKEN + X-Switchboard-User, same server", compare: "added",
      runs: pairsOf(stored.jwts.map(cpu), stored.tokens.map(cpu), "added"),
      target: "<= floor + 50 µs", holds: (vs) => vs <= 50, notes: notes(stored.tokens, stored.jwts)
    })
    record({
      id: `users.jwt-throughput.${backend}`, name: "persisted turn with a user's JWT: throughput", backend, unit: "req/s",
      floorName: "the same turn with CHAT_TOKEN, same server", compare: "ratio",
      runs: pairsOf(stored.jwts.map((p) => p.result.rps), stored.tokens.map((p) => p.result.rps), "ratio"),
      target: "(no target)", holds: () => undefined, notes: []
    })
    summary("persisted turn", persisted)

    // Nothing stored: the same on either database, so measured with the first one only.
    if (backend !== backends[0]) return
    const bare = await measure("turn without chatId", () => CHAT_BODY)
    const unstored = record({
      id: `users.jwt-cpu-nochat.${backend}`, name: "turn without chatId with a user's JWT (ES256, JWKS): server CPU per turn", backend, unit: "µs",
      floorName: "the same turn with CHAT_TOKEN + X-Switchboard-User, same server", compare: "added",
      runs: pairsOf(bare.jwts.map(cpu), bare.tokens.map(cpu), "added"),
      target: "<= floor + 50 µs", holds: (vs) => vs <= 50, notes: notes(bare.tokens, bare.jwts)
    })
    summary("turn without chatId", unstored)
  } finally {
    if (server !== undefined) {
      const errors = errorLines(server.logFile)
      if (errors.length > 0) machineNotes.push(`users server (${backend}) logged ${errors.length} errors, first: ${errors[0]!.slice(0, 300)}`)
    }
    await Promise.all(loads.map((load) => load.close()))
    if (server !== undefined) await stop(server.child)
    await auth.close()
  }
}
