/**
 * Client-generated ids. Messages the server answers get the server's id
 * (`ChatResponse.messageId`); everything the client authors (user and tool
 * messages, chat ids) gets a random one here. Both alphabets fit `ChatId`.
 */
import { randomUUID } from "node:crypto"

export const newMessageId = (): string => `msg_${randomUUID()}`

export const newChatId = (): string => `chat_${randomUUID()}`
