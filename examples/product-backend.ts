/**
 * A tiny product backend, for trying Switchboard's end users on one machine
 * (docs/users.md; README, "Your users"): it "signs in" whoever names
 * themselves and hands out short-lived JWTs, signed with a key of its own
 * whose public half it serves as a JWKS. Loopback only, node:http and `jose`.
 *
 *   npx node examples/product-backend.ts [port]      # http://127.0.0.1:8788 (PORT=… works too)
 *
 * It prints the line that starts Switchboard trusting it:
 *
 *   AUTH_JWKS_URL=http://127.0.0.1:8788/.well-known/jwks.json AUTH_ISSUER=product-backend AUTH_AUDIENCE=switchboard npm start
 *
 * Routes:
 * - `GET /.well-known/jwks.json`: `{ keys: [<the public key, with its kid>] }`;
 * - `POST /sign-in` `{ "user": "alice" }` and `GET /token?user=alice`: `{ token, tokenType, expiresIn, user }`,
 *   an ES256 JWT with `sub` the user, `iss` / `aud` the values printed at start, expiring in 10 minutes;
 *   `GET /token?user=alice&format=text` answers the bare token (for `$(curl …)`).
 *
 * A user name is 1 to 64 characters of `A-Z a-z 0-9 . _ -`. Bad input is a 400 (`{ error, code }`), a body
 * over 1 KiB a 413. There are no passwords: anyone on this machine can be anyone, which is the point of a
 * demo and the reason it listens on 127.0.0.1 only. The key pair is made anew at every start: tokens of an
 * earlier run are refused by Switchboard (their `kid` is no longer in the JWKS).
 */
import type { JWK } from "jose"
import { exportJWK, generateKeyPair, SignJWT } from "jose"
import { randomBytes } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"

export const ISSUER = "product-backend"
export const AUDIENCE = "switchboard"
/** How long a token lives, in seconds. */
export const TOKEN_SECONDS = 600
export const JWKS_PATH = "/.well-known/jwks.json"
const ALG = "ES256"
const MAX_BODY_BYTES = 1024
const USER_NAME = /^[A-Za-z0-9._-]{1,64}$/

export interface ProductBackendOptions {
  /** 0: a free port. */
  readonly port: number
  readonly issuer?: string
  readonly audience?: string
  /** Called with each user signed in (the command line prints it). */
  readonly onSignIn?: (user: string) => void
}

export interface ProductBackend {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly port: number
  readonly jwksUrl: string
  readonly issuer: string
  readonly audience: string
  readonly kid: string
  /** The line that starts Switchboard trusting this backend. */
  readonly switchboardEnv: string
  close(): Promise<void>
}

interface Failure {
  readonly status: number
  readonly code: string
  readonly error: string
}

const fail = (status: number, code: string, error: string): Failure => ({ status, code, error })

const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    "cache-control": "no-store",
    ...headers
  }).end(text)
}

/** The request's body, at most `MAX_BODY_BYTES` (else a 413 without reading the rest). */
const readBody = (req: IncomingMessage): Promise<Buffer | Failure> =>
  new Promise((done) => {
    const tooLarge = fail(413, "payload_too_large", `The body is over ${MAX_BODY_BYTES} bytes`)
    if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return done(tooLarge)
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners("data")
        req.pause()
        return done(tooLarge)
      }
      chunks.push(chunk)
    })
    req.on("end", () => done(Buffer.concat(chunks)))
    req.on("error", () => done(fail(400, "invalid_request", "The body could not be read")))
  })

/** The user a sign-in names, or why it names none. */
const userOf = (value: unknown): string | Failure =>
  typeof value === "string" && USER_NAME.test(value)
    ? value
    : fail(400, "invalid_user", "\"user\" must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and '-'")

const userOfBody = (body: Buffer): string | Failure => {
  let json: unknown
  try {
    json = JSON.parse(body.toString("utf8"))
  } catch {
    return fail(400, "invalid_json", "The body is not JSON: send {\"user\":\"<name>\"}")
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return fail(400, "invalid_request", "The body must be a JSON object: {\"user\":\"<name>\"}")
  }
  return userOf((json as { readonly user?: unknown }).user)
}

const isFailure = (value: unknown): value is Failure => typeof value === "object" && value !== null && "code" in value

/** Starts the backend on 127.0.0.1: a new ES256 key pair, its JWKS, and the sign-in routes. */
export const startProductBackend = async (options: ProductBackendOptions): Promise<ProductBackend> => {
  const issuer = options.issuer ?? ISSUER
  const audience = options.audience ?? AUDIENCE
  const kid = `product-${randomBytes(6).toString("hex")}`
  const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true })
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: "sig" }
  const jwks = JSON.stringify({ keys: [publicJwk] })

  const signIn = async (user: string) => {
    const now = Math.floor(Date.now() / 1000)
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: ALG, kid, typ: "JWT" })
      .setSubject(user)
      .setIssuer(issuer)
      .setAudience(audience)
      .setIssuedAt(now)
      .setExpirationTime(now + TOKEN_SECONDS)
      .setJti(randomBytes(9).toString("base64url"))
      .sign(privateKey)
    options.onSignIn?.(user)
    return { token, tokenType: "Bearer", expiresIn: TOKEN_SECONDS, user }
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const method = req.method ?? "GET"
    const only = (allowed: string) => {
      if (method === allowed) return true
      sendJson(res, 405, { error: `Use ${allowed} ${url.pathname}`, code: "method_not_allowed" }, { allow: allowed })
      return false
    }
    if (url.pathname === JWKS_PATH) {
      if (!only("GET")) return
      return res.writeHead(200, {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(jwks)),
        "cache-control": "max-age=300"
      }).end(jwks)
    }
    if (url.pathname === "/sign-in") {
      if (!only("POST")) return
      const body = await readBody(req)
      if (isFailure(body)) return sendJson(res, body.status, { error: body.error, code: body.code }, { connection: "close" })
      const user = userOfBody(body)
      if (isFailure(user)) return sendJson(res, user.status, { error: user.error, code: user.code })
      return sendJson(res, 200, await signIn(user))
    }
    if (url.pathname === "/token") {
      if (!only("GET")) return
      const user = userOf(url.searchParams.get("user") ?? undefined)
      if (isFailure(user)) return sendJson(res, user.status, { error: user.error, code: user.code })
      const format = url.searchParams.get("format") ?? "json"
      if (format !== "json" && format !== "text") {
        return sendJson(res, 400, { error: "\"format\" must be json or text", code: "invalid_request" })
      }
      const answer = await signIn(user)
      if (format === "json") return sendJson(res, 200, answer)
      return res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" }).end(answer.token)
    }
    return sendJson(res, 404, { error: `No route ${url.pathname}: GET ${JWKS_PATH}, POST /sign-in, GET /token?user=`, code: "not_found" })
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: "The token could not be signed", code: "internal" })
      else res.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port, "127.0.0.1", () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  const origin = `http://127.0.0.1:${port}`
  const jwksUrl = `${origin}${JWKS_PATH}`
  return {
    origin,
    port,
    jwksUrl,
    issuer,
    audience,
    kid,
    switchboardEnv: `AUTH_JWKS_URL=${jwksUrl} AUTH_ISSUER=${issuer} AUTH_AUDIENCE=${audience}`,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections()
        server.close(() => done())
      })
  }
}

// Run as a command (not when a test imports it).
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] ?? process.env["PORT"] ?? 8788)
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`invalid port ${JSON.stringify(process.argv[2] ?? process.env["PORT"])}`)
    process.exit(2)
  }
  const backend = await startProductBackend({
    port,
    onSignIn: (user) => console.log(`signed in ${user} (a token for ${TOKEN_SECONDS / 60} minutes)`)
  }).catch((error: unknown) => {
    console.error(`could not listen on 127.0.0.1:${port}: ${error instanceof Error ? error.message : String(error)}`)
    return process.exit(1)
  })
  console.log(`product backend on ${backend.origin} (ES256 key ${backend.kid}; iss ${backend.issuer}, aud ${backend.audience})`)
  console.log(`  JWKS:     ${backend.jwksUrl}`)
  console.log(`  sign in:  curl -s '${backend.origin}/token?user=alice'`)
  console.log(`            curl -s -d '{"user":"alice"}' ${backend.origin}/sign-in`)
  console.log("start Switchboard with:")
  console.log(`  ${backend.switchboardEnv} npm start`)
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void backend.close().then(() => process.exit(0)))
}
