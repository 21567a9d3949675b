/**
 * A product's sign-in as the server sees it: key pairs, a JWKS endpoint on loopback (which can be
 * changed, broken or stopped under the server), and the JWTs the product would hand its users.
 */
import type { CryptoKey, JWK } from "jose"
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from "jose"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface SigningKey {
  readonly kid: string
  readonly alg: "RS256" | "ES256" | "EdDSA"
  readonly privateKey: CryptoKey
  readonly publicKey: CryptoKey
  readonly publicJwk: JWK
}

export const makeKey = async (kid: string, alg: SigningKey["alg"] = "RS256"): Promise<SigningKey> => {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { kid, alg, privateKey, publicKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } }
}

export interface Claims {
  readonly sub?: string
  readonly iss?: string
  readonly aud?: string | Array<string>
  /** Seconds from now; `null`: no `exp`. */
  readonly expiresIn?: number | null
  /** Seconds from now. */
  readonly notBefore?: number
}

export const issuer = "https://product.test"
export const audience = "switchboard"

/** A JWT as the product signs it (defaults: valid for a minute, the test issuer and audience). */
export const signToken = (key: SigningKey, claims: Claims = {}, kid: string = key.kid): Promise<string> => {
  const now = Math.floor(Date.now() / 1000)
  let jwt = new SignJWT({}).setProtectedHeader({ alg: key.alg, kid }).setIssuedAt(now)
  if (claims.sub !== "") jwt = jwt.setSubject(claims.sub ?? "alice")
  jwt = jwt.setIssuer(claims.iss ?? issuer).setAudience(claims.aud ?? audience)
  if (claims.expiresIn !== null) jwt = jwt.setExpirationTime(now + (claims.expiresIn ?? 60))
  if (claims.notBefore !== undefined) jwt = jwt.setNotBefore(now + claims.notBefore)
  return jwt.sign(key.privateKey)
}

/** The algorithm-confusion attack: HS256 "signed" with the RSA public key (PEM) as the secret. */
export const signConfused = async (key: SigningKey, claims: Claims = {}): Promise<string> => {
  const now = Math.floor(Date.now() / 1000)
  const pem = await exportSPKI(key.publicKey)
  return new SignJWT({}).setProtectedHeader({ alg: "HS256", kid: key.kid }).setIssuedAt(now).setSubject(claims.sub ?? "alice")
    .setIssuer(issuer).setAudience(audience).setExpirationTime(now + 60).sign(new TextEncoder().encode(pem))
}

/** An unsigned token (`alg: none`). */
export const unsignedToken = (claims: Claims = {}): string => {
  const now = Math.floor(Date.now() / 1000)
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url")
  return `${part({ alg: "none", typ: "JWT" })}.${part({ sub: claims.sub ?? "alice", iss: issuer, aud: audience, exp: now + 60 })}.`
}

/** An HS256 JWT with `secret` (the `AUTH_JWT_SECRET` mode). */
export const signWithSecret = (secret: string, claims: Claims = {}): Promise<string> => {
  const now = Math.floor(Date.now() / 1000)
  let jwt = new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setIssuedAt(now).setSubject(claims.sub ?? "alice")
  if (claims.iss !== undefined) jwt = jwt.setIssuer(claims.iss)
  if (claims.aud !== undefined) jwt = jwt.setAudience(claims.aud)
  if (claims.expiresIn !== null) jwt = jwt.setExpirationTime(now + (claims.expiresIn ?? 60))
  return jwt.sign(new TextEncoder().encode(secret))
}

export interface JwksServer {
  readonly url: string
  /** The keys served from now on. */
  setKeys(keys: ReadonlyArray<SigningKey>): void
  /** `ok`: the keys; `error`: 500; `garbage`: 200 with no JSON. */
  setMode(mode: "ok" | "error" | "garbage"): void
  readonly fetches: () => number
  close(): Promise<void>
}

export const startJwks = async (keys: ReadonlyArray<SigningKey>): Promise<JwksServer> => {
  let served = keys
  let mode: "ok" | "error" | "garbage" = "ok"
  let fetches = 0
  const server = createServer((request, response) => {
    fetches++
    if (request.url !== "/.well-known/jwks.json") return response.writeHead(404).end()
    if (mode === "error") return response.writeHead(500).end("down")
    if (mode === "garbage") return response.writeHead(200, { "content-type": "application/json" }).end("<html>")
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: served.map((k) => k.publicJwk) }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    setKeys: (next) => {
      served = next
    },
    setMode: (next) => {
      mode = next
    },
    fetches: () => fetches,
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}
