/**
 * Bytes on a TCP socket, for what `fetch` will not send: malformed requests,
 * conflicting headers, clients that hang up mid-request.
 */
import { Effect } from "effect"
import { connect } from "node:net"

export interface RawAnswer {
  /** 0 when the server closed the connection without a status line. */
  readonly status: number
  readonly head: string
  readonly body: string
  readonly json: any
}

const parse = (raw: string): RawAnswer => {
  const split = raw.indexOf("\r\n\r\n")
  const head = split < 0 ? raw : raw.slice(0, split)
  const body = split < 0 ? "" : raw.slice(split + 4)
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0)
  let json: unknown = undefined
  try {
    json = JSON.parse(body)
  } catch {
    json = undefined
  }
  return { status, head, body, json }
}

/** `host:port` of a `http://host:port` base URL. */
const addressOf = (base: string) => {
  const url = new URL(base)
  return { host: url.hostname, port: Number(url.port) }
}

/**
 * Writes `bytes` and reads until the server closes the connection (send
 * `Connection: close`), failing after `timeoutMs` with what arrived so far.
 */
export const rawRequest = (base: string, bytes: string | Uint8Array, timeoutMs = 5_000) =>
  Effect.callback<RawAnswer, Error>((resume) => {
    const socket = connect(addressOf(base))
    const chunks: Array<Buffer> = []
    const timer = setTimeout(() => {
      socket.destroy()
      resume(Effect.fail(new Error(`no complete answer within ${timeoutMs} ms; got: ${Buffer.concat(chunks).toString().slice(0, 200)}`)))
    }, timeoutMs)
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("error", () => {}) // a reset after the answer is fine: the answer is what counts
    socket.on("close", () => {
      clearTimeout(timer)
      resume(Effect.succeed(parse(Buffer.concat(chunks).toString("latin1"))))
    })
    socket.write(bytes)
    return Effect.sync(() => {
      clearTimeout(timer)
      socket.destroy()
    })
  })

/** Writes `bytes` and destroys the socket `delayMs` later (0: right after the write), reading nothing. */
export const hangUpAfterWrite = (base: string, bytes: string, delayMs: number) =>
  Effect.callback<void>((resume) => {
    const socket = connect(addressOf(base), () => {
      socket.write(bytes, () => {
        if (delayMs === 0) {
          socket.destroy()
          resume(Effect.void)
        } else {
          setTimeout(() => {
            socket.destroy()
            resume(Effect.void)
          }, delayMs)
        }
      })
    })
    socket.on("error", () => resume(Effect.void))
  })

/** A POST of a JSON body as raw bytes. */
export const rawPost = (path: string, body: string, headers: Record<string, string> = {}) =>
  [
    `POST ${path} HTTP/1.1`,
    "Host: 127.0.0.1",
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    "",
    body
  ].join("\r\n")
