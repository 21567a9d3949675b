/**
 * Client-generated ids. Messages the server answers get the server's id
 * (`ChatResponse.messageId`); everything the client authors (user and tool
 * messages, chat ids) gets a random one here. Both alphabets fit `ChatId`.
 * `globalThis.crypto` is the Web Crypto API: the same in browsers and Node.
 */
export const newMessageId = (): string => `msg_${globalThis.crypto.randomUUID()}`

export const newChatId = (): string => `chat_${globalThis.crypto.randomUUID()}`
