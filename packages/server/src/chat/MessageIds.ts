/**
 * The ids the server gives the messages it writes (an answer, a job's acknowledgement). A
 * streamed turn announces its answer's id in its first chunk, before anything is stored, so a
 * client can hold an id of this form that the transcript never got (the turn failed).
 */
import { randomUUID } from "node:crypto"

export const newMessageId = (): string => `msg_${randomUUID()}`

const SERVER_ID = /^msg_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Whether `id` is of the server's making. */
export const isServerMessageId = (id: string): boolean => SERVER_ID.test(id)
