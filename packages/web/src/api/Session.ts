/**
 * The console's bearer tokens and who needs asking for one. Two realms, as the
 * server has two: `chat` (`CHAT_TOKEN`: `/api/*`, the chat, jobs and agents
 * routes) and `admin` (`ADMIN_TOKEN`: `/admin/*`, the operator's routes).
 *
 * A token is kept in `sessionStorage` only — this tab, until it closes —
 * never in `localStorage`, a URL or a log. The console does not know whether
 * the server wants a token until it refuses a request: a 401 drops the realm's
 * token and asks for it (`askFor`), the sign-in form stores the one the server
 * accepts (`signIn`), and every page's API calls then run again with it (the
 * `useApi` hooks hand out a new client when the token changes).
 *
 * The chat realm's token is either the server's shared `CHAT_TOKEN` or a
 * user's JWT (docs/users.md): the same bearer token to the server, which
 * verifies it. The console reads a JWT's `sub` to say who is signed in
 * (`identityOf`) — for display only, never to decide anything. Signing out
 * (`signOutAll`) forgets every realm's token and, through `onSignOut`, what
 * this browser kept of the user's chats.
 */
import { createStore } from "zustand/vanilla"

export type Realm = "chat" | "admin"

export const REALMS: ReadonlyArray<Realm> = ["chat", "admin"]

/** The sessionStorage key of each realm's token. */
export const TOKEN_KEYS: Record<Realm, string> = {
  chat: "switchboard.chatToken",
  admin: "switchboard.adminToken"
}

export interface SessionState {
  /** The token of each realm, when one was given (`undefined`: none: the server may want none). */
  readonly tokens: Readonly<Record<Realm, string | undefined>>
  /** The realms whose token the server refused (or wants and has none): the console asks for them. */
  readonly asking: Readonly<Record<Realm, boolean>>
}

/** sessionStorage, or nothing when the browser refuses it (then the token lasts as long as the page). */
const storage = (): Storage | undefined => {
  try {
    return typeof sessionStorage === "undefined" ? undefined : sessionStorage
  } catch {
    return undefined
  }
}

const read = (realm: Realm): string | undefined => {
  try {
    const value = storage()?.getItem(TOKEN_KEYS[realm])
    return value === null || value === undefined || value === "" ? undefined : value
  } catch {
    return undefined
  }
}

const write = (realm: Realm, token: string | undefined) => {
  try {
    if (token === undefined) storage()?.removeItem(TOKEN_KEYS[realm])
    else storage()?.setItem(TOKEN_KEYS[realm], token)
  } catch {
    // Storage full or refused: the token stays in memory for this page.
  }
}

export const sessionStore = createStore<SessionState>()(() => ({
  tokens: { chat: read("chat"), admin: read("admin") },
  asking: { chat: false, admin: false }
}))

/** Keeps the realm's token (sessionStorage) and stops asking for it. */
export const signIn = (realm: Realm, token: string) => {
  write(realm, token)
  sessionStore.setState((state) => ({
    tokens: { ...state.tokens, [realm]: token },
    asking: { ...state.asking, [realm]: false }
  }))
}

/** Forgets the realm's token and asks for one: what a 401 does. */
export const askFor = (realm: Realm) => {
  const state = sessionStore.getState()
  if (state.asking[realm] && state.tokens[realm] === undefined) return
  write(realm, undefined)
  sessionStore.setState({
    tokens: { ...state.tokens, [realm]: undefined },
    asking: { ...state.asking, [realm]: true }
  })
}

/** Forgets the realm's token without asking (signing out); the next 401 asks. */
export const signOut = (realm: Realm) => {
  write(realm, undefined)
  sessionStore.setState((state) => ({ tokens: { ...state.tokens, [realm]: undefined } }))
}

const signOutListeners = new Set<() => void>()

/** Hears every sign-out (`signOutAll`): what keeps a user's data drops it. */
export const onSignOut = (listener: () => void): () => void => {
  signOutListeners.add(listener)
  return () => void signOutListeners.delete(listener)
}

/**
 * Signing out: forgets every realm's token (this tab) and, through `onSignOut`, what this browser
 * kept of the user's chats; then asks for `realm`'s token (the page in view's).
 */
export const signOutAll = (realm: Realm) => {
  for (const each of REALMS) write(each, undefined)
  for (const listener of signOutListeners) listener()
  sessionStore.setState({
    tokens: { chat: undefined, admin: undefined },
    asking: { chat: realm === "chat", admin: realm === "admin" }
  })
}

/** Who a token says it is: a JWT's subject (and its expiry, epoch ms, when it has one). */
export interface Identity {
  readonly user: string
  readonly expiresAt?: number | undefined
}

const base64UrlJson = (part: string): unknown => {
  const base64 = part.replace(/-/g, "+").replace(/_/g, "/")
  const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4))
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))))
}

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/**
 * The user a JWT names (its `sub`), read WITHOUT verifying it: for display only (the server
 * verifies every request's token). `undefined` for any other token (a `CHAT_TOKEN`) or a JWT
 * without a usable `sub`.
 */
export const identityOf = (token: string | undefined): Identity | undefined => {
  if (token === undefined || !JWT.test(token)) return undefined
  try {
    const [header, payload] = token.split(".")
    const head = base64UrlJson(header!) as { readonly alg?: unknown } | null
    if (typeof head !== "object" || head === null || typeof head.alg !== "string") return undefined
    const claims = base64UrlJson(payload!) as { readonly sub?: unknown; readonly exp?: unknown } | null
    if (typeof claims !== "object" || claims === null || typeof claims.sub !== "string" || claims.sub === "") return undefined
    return {
      user: claims.sub,
      expiresAt: typeof claims.exp === "number" && Number.isFinite(claims.exp) ? claims.exp * 1000 : undefined
    }
  } catch {
    return undefined
  }
}

/**
 * Whose data this browser's chat caches hold, from the chat token: `user:<sub>` for a JWT,
 * `shared` for the shared `CHAT_TOKEN` or none (the server's single user).
 */
export const ownerOf = (token: string | undefined): string => {
  const identity = identityOf(token)
  return identity === undefined ? "shared" : `user:${identity.user}`
}

/**
 * Whether a failure is the server's 401: the typed client's `Unauthenticated`, an error with
 * `status: 401` (`ApiUnexpectedAnswer`, the chat transport's errors) or `code: "unauthenticated"`,
 * looked for down its `cause` chain.
 */
export const isUnauthorized = (error: unknown): boolean => {
  let current = error
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const candidate = current as { readonly _tag?: unknown; readonly status?: unknown; readonly code?: unknown; readonly cause?: unknown }
    if (candidate._tag === "Unauthenticated" || candidate.status === 401 || candidate.code === "unauthenticated") return true
    current = candidate.cause
  }
  return false
}
