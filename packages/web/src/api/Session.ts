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
