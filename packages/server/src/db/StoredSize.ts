/**
 * How large a value is as the database will hold it: the UTF-8 bytes of its
 * JSON, checked against `maxStoredValueBytes` before it is stored (a chat
 * message, a decision's arguments). A message over it would be stored fine and then never read back (the driver
 * refuses a row over 16 MiB), so the chat's every later turn and its
 * transcript would fail: a request's own message is refused (413), a
 * provider's answer is a provider failure (`too_large`), a steer carries a
 * failure instead of the result.
 */
import type { ChatMessage } from "@switchboard/domain"
import { maxStoredValueBytes } from "@switchboard/domain"

export const storedBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8")

export const fitsStorage = (message: ChatMessage): boolean => storedBytes(message) <= maxStoredValueBytes

/** The first message that does not fit, with its index and size; `undefined` when all do. */
export const firstOversized = (
  messages: ReadonlyArray<ChatMessage>
): { readonly index: number; readonly bytes: number } | undefined => {
  for (let index = 0; index < messages.length; index++) {
    const bytes = storedBytes(messages[index]!)
    if (bytes > maxStoredValueBytes) return { index, bytes }
  }
  return undefined
}
