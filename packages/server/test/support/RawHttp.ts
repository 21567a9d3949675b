/** One HTTP exchange with node:http: bytes and headers exactly as sent (fetch would decompress them). */
import { Effect } from "effect"
import { request as httpRequest } from "node:http"

export interface RawExchange {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: Buffer
}

export const rawRequest = (
  url: string,
  /** `localAddress`: the client's own address, e.g. `127.0.0.2` to be another loopback client. */
  options: { method?: string; headers?: Record<string, string>; body?: Uint8Array; localAddress?: string } = {}
) =>
  Effect.promise(() =>
    new Promise<RawExchange>((resolve, reject) => {
      // An explicit length: for GET, DELETE or OPTIONS Node would send the body with no framing at all.
      const headers = { ...options.headers, ...(options.body === undefined ? {} : { "content-length": String(options.body.byteLength) }) }
      const local = options.localAddress === undefined ? {} : { localAddress: options.localAddress }
      const req = httpRequest(url, { method: options.method ?? "GET", headers, ...local }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
        res.on("error", reject)
      })
      req.on("error", reject)
      req.end(options.body)
    })
  )
