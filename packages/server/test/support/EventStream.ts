/**
 * Reading a streamed turn in tests: the SSE body as the chunks it carried
 * (`data: [DONE]` and keep-alive comments noted), read as it arrives.
 */
import type { UiChunk } from "@switchboard/domain"
import { Effect } from "effect"

export interface ReadStream {
  readonly status: number
  readonly headers: Headers
  readonly chunks: Array<UiChunk>
  readonly done: boolean
  readonly json: any
}

/** Splits an SSE body into its events' `data` values (comments dropped). */
export const sseData = (text: string): Array<string> =>
  text.split(/\r?\n\r?\n/u).flatMap((event) => {
    const data = event.split(/\r?\n/u).filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart())
    return data.length > 0 ? [data.join("\n")] : []
  })

/**
 * A request whose answer is read as a stream. `until` sees each chunk: returning true stops reading
 * and closes the connection (a client going away).
 */
export const readEventStream = (url: string, init: RequestInit, until?: (chunk: UiChunk, all: ReadonlyArray<UiChunk>) => boolean) =>
  Effect.promise(async (): Promise<ReadStream> => {
    const controller = new AbortController()
    const response = await fetch(url, { ...init, signal: controller.signal })
    if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      const text = await response.text()
      return { status: response.status, headers: response.headers, chunks: [], done: false, json: text === "" ? undefined : JSON.parse(text) }
    }
    const chunks: Array<UiChunk> = []
    let done = false
    let buffer = ""
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    try {
      for (;;) {
        const { done: ended, value } = await reader.read()
        if (ended) break
        buffer += decoder.decode(value, { stream: true })
        const cut = buffer.lastIndexOf("\n\n")
        if (cut < 0) continue
        const complete = buffer.slice(0, cut + 2)
        buffer = buffer.slice(cut + 2)
        for (const data of sseData(complete)) {
          if (data === "[DONE]") {
            done = true
            continue
          }
          const chunk = JSON.parse(data) as UiChunk
          chunks.push(chunk)
          if (until?.(chunk, chunks) === true) {
            controller.abort()
            return { status: response.status, headers: response.headers, chunks, done, json: undefined }
          }
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error
    }
    return { status: response.status, headers: response.headers, chunks, done, json: undefined }
  })

/** The text a stream carried: its text deltas concatenated. */
export const streamedText = (chunks: ReadonlyArray<UiChunk>): string =>
  chunks.flatMap((c) => c.type === "text-delta" ? [c.delta] : []).join("")

export const streamInit = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
  body: JSON.stringify(body)
})
