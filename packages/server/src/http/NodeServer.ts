/**
 * The `node:http` server under the Effect one, with the answers Node gives on
 * its own made to follow the contract (every error body is JSON
 * `{ error, code }`):
 *
 * - requests its parser refuses (garbage, `Content-Length` with
 *   `Transfer-Encoding`, headers over 16 KiB, a timeout) — Node's default is
 *   a bare status line with an empty body;
 * - an `Expect` other than `100-continue` — Node's default is an empty 417;
 * - requests that arrive while the server is still starting (the database
 *   and migrations come up after the port is bound): `/healthz` 200 (the
 *   process lives), `/readyz` 503, anything else 503 `not_ready` with
 *   `Retry-After` — instead of an accepted request that is never answered.
 *   The Effect handler replaces this one the moment it is installed.
 */
import { statusOfCode } from "@switchboard/domain"
import type { ErrorCode } from "@switchboard/domain"
import type { IncomingMessage, ServerResponse } from "node:http"
import { createServer, STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"

/** An answer whose status is its code's (domain `statusOfCode`). */
const json = (code: ErrorCode, error: string) => ({ status: statusOfCode[code], text: JSON.stringify({ error, code }) })

/** The parser's refusal as a status and a JSON body. */
export const clientErrorAnswer = (code: string | undefined) => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return json("headers_too_large", "Request headers too large (at most 16 KiB)")
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return json("request_timeout", "The request was not received in time")
    default:
      return json("invalid_request", "Invalid request: malformed HTTP")
  }
}

const rawAnswer = ({ status, text }: { status: number; text: string }) =>
  `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\n` +
  "Content-Type: application/json\r\n" +
  `Content-Length: ${Buffer.byteLength(text)}\r\n` +
  "Connection: close\r\n\r\n" +
  text

const onClientError = (error: NodeJS.ErrnoException, socket: Duplex) => {
  // A reset or a socket whose answer already started has nobody (or no room) to answer.
  const started = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true
  if (error.code === "ECONNRESET" || !socket.writable || started) {
    socket.destroy()
    return
  }
  socket.end(rawAnswer(clientErrorAnswer(error.code)))
}

const send = (response: ServerResponse, answer: { status: number; text: string }, headers: Record<string, string> = {}) => {
  response.writeHead(answer.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(answer.text),
    ...headers
  })
  response.end(answer.text)
}

const onCheckExpectation = (request: IncomingMessage, response: ServerResponse) => {
  const expect = String(request.headers.expect ?? "").slice(0, 64)
  send(response, json("expectation_failed", `Unsupported Expect header: ${expect} (only 100-continue)`), { connection: "close" })
}

/** What a request gets before the routes are ready. */
export const startingAnswer = (url: string | undefined) => {
  const path = (url ?? "/").split("?")[0]
  if (path === "/healthz") return { status: 200, text: JSON.stringify({ status: "ok" }) }
  if (path === "/readyz") return json("not_ready", "Starting: the database and migrations are not ready yet")
  return json("not_ready", "The server is starting; retry shortly")
}

const whileStarting = (request: IncomingMessage, response: ServerResponse) => {
  // The body is not read: drop it rather than keep the connection for another request.
  send(response, startingAnswer(request.url), { "retry-after": "1", connection: "close" })
  request.resume()
}

/** A `node:http` server with the handlers above; give it to `NodeHttpServer.layer`. */
export const createNodeServer = () => {
  const server = createServer()
  server.on("clientError", onClientError)
  server.on("checkExpectation", onCheckExpectation)
  server.on("request", whileStarting)
  // `NodeHttpServer` installs its handler when the app is built: from then on it answers everything.
  const handOver = (event: string | symbol, listener: unknown) => {
    if (event === "request" && listener !== whileStarting) {
      server.off("request", whileStarting)
      server.off("newListener", handOver)
    }
  }
  server.on("newListener", handOver)
  return server
}
