/**
 * The key a chat is stored and found under: its user's and its id (docs/users.md). Every repository
 * method that reads or writes a chat takes a `ChatKey`, never a bare chat id, so a route cannot forget
 * whose chat it asks for: the only way to a key is through the user.
 *
 * Stored as one text (`chats.id` and every `chat_id` that refers to it): `<user>/<chatId>`, and the bare
 * `chatId` for the user `default` — so the chats from before users were known are that user's, under
 * their ids. A chat id holds no `/` (`ChatId`), so the last `/` splits a key whatever the user id holds.
 */
import { DEFAULT_USER } from "@switchboard/domain"
import type { Brand } from "effect"

export type ChatKey = string & Brand.Brand<"ChatKey">

export const chatKey = (userId: string, chatId: string): ChatKey =>
  (userId === DEFAULT_USER ? chatId : `${userId}/${chatId}`) as ChatKey

/** A key as the database holds it (a job's `chat_id`, a chunk row's). */
export const storedChatKey = (stored: string): ChatKey => stored as ChatKey

/** The chat id its user knows the chat by: what goes on the wire. */
export const chatIdOf = (key: ChatKey): string => key.slice(key.lastIndexOf("/") + 1)

export const userOf = (key: ChatKey): string => {
  const cut = key.lastIndexOf("/")
  return cut < 0 ? DEFAULT_USER : key.slice(0, cut)
}
