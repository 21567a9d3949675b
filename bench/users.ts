/**
 * The users case's sign-in (`npm run bench -- --only=users`; docs/performance.md, "JWT per turn"):
 * the product backend of `examples/product-backend.ts` in this process (its ES256 key, its JWKS on
 * loopback, the tokens it hands out), and the two ways one server is called for the same user —
 * a user's JWT, or the backend's `CHAT_TOKEN` naming the user in `X-Switchboard-User`.
 *
 * Also what `jose` alone takes to verify one such token here (`jwtVerify` against a local key set:
 * no server, no HTTP), printed beside the case as what the difference is made of.
 */
import { createLocalJWKSet, jwtVerify } from "jose"
import { randomBytes } from "node:crypto"
import { startProductBackend } from "../examples/product-backend.ts"

export interface UsersAuth {
  /** The server's variables: the backend's JWKS, issuer and audience, and `CHAT_TOKEN`. */
  readonly env: Readonly<Record<string, string>>
  /** Closed-loop worker `worker`'s headers as the product's backend (`CHAT_TOKEN` + `X-Switchboard-User`). */
  readonly chatTokenHeaders: (worker: number) => Readonly<Record<string, string>>
  /** The same worker's user with their own JWT. */
  readonly jwtHeaders: (worker: number) => Readonly<Record<string, string>>
  /** jose's `jwtVerify` of one of the tokens against the backend's key set in this process: CPU µs per verify. */
  readonly verifyCpuUs: () => Promise<number>
  close(): Promise<void>
}

/** The backend, and one user per connection (`bench-user-<n>`), each signed in once (a token lives 10 minutes). */
export const startUsersAuth = async (connections: number): Promise<UsersAuth> => {
  const backend = await startProductBackend({ port: 0 })
  const chatToken = randomBytes(24).toString("base64url")
  const users = Array.from({ length: connections }, (_, n) => `bench-user-${n}`)
  const tokens: Array<string> = []
  try {
    for (const user of users) {
      const response = await fetch(`${backend.origin}/sign-in`, { method: "POST", body: JSON.stringify({ user }) })
      const body = await response.json() as { token?: unknown }
      if (!response.ok || typeof body.token !== "string") throw new Error(`sign-in of ${user}: HTTP ${response.status}`)
      tokens.push(body.token)
    }
  } catch (error) {
    await backend.close()
    throw error
  }
  const chatTokenHeaders = users.map((user) => ({ authorization: `Bearer ${chatToken}`, "x-switchboard-user": user }))
  const jwtHeaders = tokens.map((token) => ({ authorization: `Bearer ${token}` }))

  const verifyCpuUs = async () => {
    const keys = createLocalJWKSet(await (await fetch(backend.jwksUrl)).json() as Parameters<typeof createLocalJWKSet>[0])
    // The server's options (packages/server/src/users/JwtAuth.ts).
    const options = {
      algorithms: ["RS256", "ES256", "EdDSA"],
      clockTolerance: 60,
      requiredClaims: ["exp", "sub", "iss", "aud"],
      issuer: backend.issuer,
      audience: backend.audience
    }
    const token = tokens[0]!
    for (let i = 0; i < 2_000; i++) await jwtVerify(token, keys, options)
    const n = 10_000
    const before = process.cpuUsage()
    for (let i = 0; i < n; i++) await jwtVerify(token, keys, options)
    const used = process.cpuUsage(before)
    return (used.user + used.system) / n
  }

  return {
    env: {
      AUTH_JWKS_URL: backend.jwksUrl,
      AUTH_ISSUER: backend.issuer,
      AUTH_AUDIENCE: backend.audience,
      CHAT_TOKEN: chatToken
    },
    chatTokenHeaders: (worker) => chatTokenHeaders[worker % chatTokenHeaders.length]!,
    jwtHeaders: (worker) => jwtHeaders[worker % jwtHeaders.length]!,
    verifyCpuUs,
    close: () => backend.close()
  }
}
