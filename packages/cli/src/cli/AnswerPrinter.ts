/**
 * The answers on stdout as they stream: each piece of text written as it
 * arrives, a line ended where a message's text ends, and whatever of the
 * turn's final message did not stream written when the turn ends (all of it
 * with `--no-stream`, or for the iteration limit's message). stdout then holds
 * the same text it would without streaming, the text of the tool rounds
 * before the answer included.
 *
 * The status line shares the terminal: before it is written, `endLine` ends
 * the line the text left open, so it never overwrites the answer.
 */
import type { ChatMessage } from "@switchboard/domain"

export interface AnswerPrinter {
  /** A piece of the text of message `messageId`, written at once. */
  readonly delta: (text: string, messageId: string) => void
  /** Ends the line streamed text left open, if any. */
  readonly endLine: () => void
  /** The turn's last message: the rest of its text (all of it when none streamed), then the end of its line. */
  readonly finish: (message: ChatMessage) => void
}

export const makeAnswerPrinter = (write: (text: string) => void): AnswerPrinter => {
  /** The message whose text ends the output so far, without its line end. */
  let open: string | undefined
  /** What was written of each message of the turn. */
  const written = new Map<string, string>()

  const endLine = () => {
    if (open === undefined) return
    write("\n")
    open = undefined
  }
  const delta = (text: string, messageId: string) => {
    if (text === "") return
    if (open !== messageId) endLine()
    write(text)
    open = messageId
    written.set(messageId, (written.get(messageId) ?? "") + text)
  }
  const finish = (message: ChatMessage) => {
    const streamed = written.get(message.id) ?? ""
    written.clear()
    if (streamed !== "" && message.content.startsWith(streamed)) {
      // It streamed: its line may already be ended (a status line followed it); only the rest is new.
      delta(message.content.slice(streamed.length), message.id)
      return endLine()
    }
    endLine()
    write(`${message.content}\n`)
  }
  return { delta, endLine, finish }
}
