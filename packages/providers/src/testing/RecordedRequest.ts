/** A request as a fake server (`FakeHttp`) records it, and how far its streamed answer got (`FakeStream`). */
import type { IncomingHttpHeaders } from "node:http"

/** A multipart upload as the server received it. */
export interface RecordedUpload {
  readonly fileName: string
  readonly size: number
  readonly mediaType: string
  /** Every non-file field (`model`, `language`, …). */
  readonly fields: Readonly<Record<string, string>>
}

export interface RecordedRequest {
  readonly method: string
  /** Path and query, e.g. `/v1/chat/completions`. */
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly rawBody: Buffer
  /** The body parsed as JSON; `undefined` when it is not JSON (e.g. multipart). */
  readonly body: unknown
  readonly upload?: RecordedUpload
  /** The client's port: requests over one kept-alive connection share it. */
  readonly remotePort: number
  /**
   * Set when the client closed the connection before the answer was complete (an aborted or
   * timed-out call, a consumer that stopped reading a stream); never when the fake itself cut it
   * (`destroy`, a stream's `cutAfter`).
   */
  aborted: boolean
  /** For a streamed answer (`FakeStream`): how far it got, live. */
  streamed?: FakeStreamProgress
}

/** How far a streamed answer got: deltas written, and whether its end was. */
export interface FakeStreamProgress {
  deltasSent: number
  finished: boolean
}
