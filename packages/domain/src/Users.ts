/**
 * End users (docs/users.md): who a request acts for, and what they own — their chats.
 *
 * A product signs its users in and hands each a short-lived JWT; the server takes the JWT's `sub` as
 * the user. Everything of a chat is its user's, and chat ids are per user: the same `chatId` from two
 * users is two chats.
 */
import { Context, Schema } from "effect"
import { ChatId } from "./Chat.ts"
import { Text } from "./Json.ts"

/** A user id: a JWT's `sub`, or what a trusted backend names in `X-Switchboard-User`. */
export const UserId = Text.check(Schema.isMinLength(1), Schema.isMaxLength(256)).annotate({
  description: "A user id (a JWT's `sub`): 1 to 256 characters"
})
export type UserId = typeof UserId.Type

/** The user of every request before users were known, and without `AUTH_*` and `X-Switchboard-User`. */
export const DEFAULT_USER: UserId = "default"

/** The header a trusted backend (holding `CHAT_TOKEN`) names the user with. */
export const USER_HEADER = "x-switchboard-user"

/**
 * The user a `/api/*` request acts for (`ChatAuth`). `vouched`: someone the server trusts said who it
 * is — a verified JWT, or a backend holding `CHAT_TOKEN` naming the user — so per-user limits may key
 * on it; a bare `X-Switchboard-User` without either is a name anyone can change with each request.
 */
export class CurrentUser extends Context.Service<CurrentUser, { readonly userId: UserId; readonly vouched: boolean }>()(
  "switchboard/domain/CurrentUser"
) {}

/** The longest `title` a chat summary carries (an ellipsis included). */
export const TITLE_MAX = 80

/** A chat of the user's, as a list shows it. */
export const ChatSummary = Schema.Struct({
  chatId: ChatId,
  agent: Schema.String,
  /** The chat's first user message, at most 80 characters (an ellipsis when cut); empty when it has none. */
  title: Schema.String,
  createdAt: Schema.String,
  /** When a message was last stored. */
  updatedAt: Schema.String
})
export type ChatSummary = typeof ChatSummary.Type

export const ChatList = Schema.Struct({
  chats: Schema.Array(ChatSummary),
  /** Pass as `before` for the next (older) page; absent on the last page. */
  nextBefore: Schema.optionalKey(Schema.String)
})
export type ChatList = typeof ChatList.Type

/** A page of chats: newest first, `limit` (default 50, at most 200) after the `before` cursor. */
export const ChatListQuery = {
  limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 }))),
  before: Schema.optionalKey(Text.check(Schema.isMaxLength(600)))
}

/** The title a chat's first user message gives it. */
export const chatTitle = (firstUserText: string | undefined): string => {
  const text = (firstUserText ?? "").replace(/\s+/gu, " ").trim()
  const chars = Array.from(text)
  return chars.length <= TITLE_MAX ? text : `${chars.slice(0, TITLE_MAX - 1).join("").trimEnd()}…`
}
