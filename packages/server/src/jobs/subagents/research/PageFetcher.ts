/**
 * `fetch_url`'s transport: GET one http(s) page a model asked for, safely.
 *
 * - Only `http:` and `https:` URLs, without credentials in them.
 * - Unless `allowPrivate`, no connection to a non-public address
 *   (`AddressPolicy`): IP literals are checked before the request, hostnames
 *   at connect time, by the DNS lookup the socket itself uses (an undici
 *   Agent's `connect.lookup`), so the address checked is the address
 *   connected to and DNS rebinding has no window.
 * - Redirects are followed by hand (at most `maxRedirects`), each target
 *   checked like the first URL.
 * - A size limit (`maxBytes`, from `content-length` and while reading) and a
 *   time limit for the whole fetch, redirects included (`timeoutMs`).
 * - HTML becomes readable text (`ReadableText`), in a worker thread with its
 *   own time limit (`extractTimeoutMs`): a page built to be slow to parse
 *   costs a terminated worker, not the server's event loop. Plain text,
 *   Markdown and JSON stay as they are; anything else (images, PDFs,
 *   archives) is refused.
 *
 * Every refusal is a `PageFetchError` whose message is written for the model
 * (it reads it as the tool call's error).
 */
import { Data, Effect } from "effect"
import type { Scope } from "effect"
import { lookup as dnsLookup } from "node:dns"
import type { LookupAddress } from "node:dns"
import { isIP } from "node:net"
import { Worker } from "node:worker_threads"
import { Agent } from "undici"
import { isPublicAddress } from "./AddressPolicy.ts"
import type { ReadablePage } from "./ReadableText.ts"
import { siblingModule } from "../../../process/SiblingModule.ts"

export class PageFetchError extends Data.TaggedError("PageFetchError")<{ readonly message: string }> {}

export interface FetchedPage {
  /** The URL asked for. */
  readonly requestedUrl: string
  /** Where the content came from, after redirects. */
  readonly url: string
  readonly title: string
  readonly contentType: string
  readonly text: string
}

/** Resolves a hostname to every address it has (the platform's resolver by default). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<LookupAddress>>

export interface PageFetcherOptions {
  readonly allowPrivate: boolean
  readonly maxBytes?: number
  readonly timeoutMs?: number
  readonly maxRedirects?: number
  /** For tests: a resolver that maps names to chosen addresses. */
  readonly resolve?: Resolver
  /**
   * For tests: which addresses may be connected to, replacing `allowPrivate`
   * and the policy (a test's page server is on loopback, like what it proves
   * unreachable).
   */
  readonly addressAllowed?: (address: string) => boolean
  readonly extractTimeoutMs?: number
}

export const DEFAULT_MAX_BYTES = 2 * 1024 * 1024
export const DEFAULT_FETCH_TIMEOUT_MS = 15_000
export const DEFAULT_MAX_REDIRECTS = 5
export const DEFAULT_EXTRACT_TIMEOUT_MS = 5_000

const READABLE_WORKER = siblingModule(import.meta.url, "ReadableWorker")

/** `readableText` in a worker thread, terminated at the time limit or when the fetch is aborted. */
const extractInWorker = (url: URL, html: string, timeoutMs: number, signal: AbortSignal): Promise<ReadablePage> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(READABLE_WORKER, { workerData: html, resourceLimits: { maxOldGenerationSizeMb: 512 } })
    let settled = false
    const settle = (outcome: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal.removeEventListener("abort", onAbort)
      void worker.terminate()
      outcome()
    }
    const timer = setTimeout(
      () => settle(() => reject(new PageFetchError({ message: `could not read ${url.href}: reducing it to text took longer than ${timeoutMs} ms` }))),
      timeoutMs
    )
    const onAbort = () => settle(() => reject(signal.reason))
    signal.addEventListener("abort", onAbort, { once: true })
    worker.once("message", (page: ReadablePage) => settle(() => resolve(page)))
    worker.once("error", (error) => settle(() => reject(new PageFetchError({ message: `could not read ${url.href}: ${error.message}` }))))
    worker.once("exit", (code) => settle(() => reject(new PageFetchError({ message: `could not read ${url.href}: the reader stopped (${code})` }))))
  })

export interface PageFetcher {
  fetch(url: string): Effect.Effect<FetchedPage, PageFetchError>
}

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true }, (error, addresses) => error ? reject(error) : resolve(addresses))
  )

const PRIVATE_CODE = "ERR_SWITCHBOARD_PRIVATE_ADDRESS"

const REFUSED = "refused: "

const privateAddressMessage = (host: string, address: string) =>
  `${REFUSED}${host} resolves to ${address}, a private, loopback or link-local address`

/** The socket's DNS lookup: resolve, refuse non-public addresses, hand the rest to `net.connect`. */
const guardedLookup = (resolve: Resolver, allowed: (address: string) => boolean) =>
(
  hostname: string,
  options: { readonly all?: boolean },
  callback: (error: NodeJS.ErrnoException | null, address: string | Array<LookupAddress>, family?: number) => void
): void => {
  resolve(hostname).then(
    (addresses) => {
      const refused = addresses.find((a) => !allowed(a.address))
      if (refused !== undefined) {
        const error: NodeJS.ErrnoException = new Error(privateAddressMessage(hostname, refused.address))
        error.code = PRIVATE_CODE
        return callback(error, "")
      }
      const first = addresses[0]
      if (first === undefined) {
        const error: NodeJS.ErrnoException = new Error(`${hostname} has no address`)
        error.code = "ENOTFOUND"
        return callback(error, "")
      }
      if (options.all === true) callback(null, [...addresses])
      else callback(null, first.address, first.family)
    },
    (error: NodeJS.ErrnoException) => callback(error, "")
  )
}

/** A thrown value as the model reads it: our lookup's refusal as it is, else the most useful messages of the cause chain. */
const failureOf = (url: string, cause: unknown): PageFetchError => {
  if (cause instanceof PageFetchError) return cause
  const messages: Array<string> = []
  let current: unknown = cause
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    // undici may re-wrap the lookup's error and drop its code: its message identifies it too.
    if ((current as NodeJS.ErrnoException).code === PRIVATE_CODE || current.message.startsWith(REFUSED)) {
      return new PageFetchError({ message: current.message.slice(current.message.indexOf(REFUSED)) })
    }
    const code = (current as NodeJS.ErrnoException).code
    messages.push(code !== undefined && !current.message.includes(code) ? `${current.message} (${code})` : current.message)
    current = current.cause
  }
  const described = messages.filter((m) => m !== "").join(": ") || String(cause)
  return new PageFetchError({ message: `could not fetch ${url}: ${described}` })
}

const parseTarget = (raw: string, base?: URL): URL => {
  let url: URL
  try {
    url = base === undefined ? new URL(raw) : new URL(raw, base)
  } catch {
    throw new PageFetchError({ message: `not a URL: ${raw}` })
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new PageFetchError({ message: `refused: only http and https URLs can be fetched, not ${url.protocol}` })
  }
  if (url.username !== "" || url.password !== "") {
    throw new PageFetchError({ message: "refused: URLs with credentials are not fetched" })
  }
  url.hash = ""
  return url
}

/** Drops a body not to be read (the socket with it); its abort error has nobody to tell. */
const discard = (body: { on(event: "error", listener: () => void): unknown; destroy(): void }) => {
  body.on("error", () => {})
  body.destroy()
}

const TEXT_TYPES = /^(text\/(plain|markdown|csv)|application\/(json|[a-z.+-]*\+json|xml|[a-z.+-]*\+xml)|text\/xml)$/
const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)$/

const decode = (bytes: Uint8Array, contentType: string): string => {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1]
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes)
  } catch {
    return new TextDecoder("utf-8").decode(bytes)
  }
}

export const make = (options: PageFetcherOptions): Effect.Effect<PageFetcher, never, Scope.Scope> =>
  Effect.gen(function*() {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES
    const timeoutMs = options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS
    const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS
    const extractTimeoutMs = options.extractTimeoutMs ?? DEFAULT_EXTRACT_TIMEOUT_MS
    const resolve = options.resolve ?? systemResolver
    const allowed = options.addressAllowed ?? (options.allowPrivate ? () => true : isPublicAddress)
    const agent = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Agent({
          connect: { lookup: guardedLookup(resolve, allowed) as never, timeout: timeoutMs },
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs
        })
      ),
      (a) => Effect.promise(() => a.destroy())
    )

    /** IP literals never reach the lookup (`net.connect` skips it for them): check them here. */
    const checkLiteral = (url: URL) => {
      const host = url.hostname.replace(/^\[|\]$/g, "")
      if (isIP(host) !== 0 && !allowed(host)) {
        throw new PageFetchError({ message: privateAddressMessage(url.hostname, host) })
      }
    }

    const readLimited = async (body: AsyncIterable<Uint8Array> & Parameters<typeof discard>[0], url: URL) => {
      const chunks: Array<Uint8Array> = []
      let size = 0
      for await (const chunk of body) {
        size += chunk.byteLength
        if (size > maxBytes) {
          discard(body)
          throw new PageFetchError({ message: `refused: ${url.href} is larger than the ${maxBytes}-byte limit` })
        }
        chunks.push(chunk)
      }
      return Buffer.concat(chunks)
    }

    const fetchOnce = async (requested: string, signal: AbortSignal): Promise<FetchedPage> => {
      let url = parseTarget(requested)
      for (let hop = 0;; hop++) {
        checkLiteral(url)
        const response = await agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: "GET",
          headers: {
            "user-agent": "SwitchboardResearch/0.1 (+fetch_url)",
            accept: "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.1"
          },
          signal
        })
        const status = response.statusCode
        if (status >= 300 && status < 400 && status !== 304) {
          discard(response.body)
          const location = response.headers["location"]
          const target = Array.isArray(location) ? location[0] : location
          if (target === undefined) throw new PageFetchError({ message: `${url.href} answered HTTP ${status} without a Location` })
          if (hop >= maxRedirects) throw new PageFetchError({ message: `refused: more than ${maxRedirects} redirects` })
          url = parseTarget(target, url)
          continue
        }
        if (status < 200 || status > 299) {
          discard(response.body)
          throw new PageFetchError({ message: `${url.href} answered HTTP ${status}` })
        }
        const rawType = response.headers["content-type"]
        const contentType = (Array.isArray(rawType) ? rawType[0] : rawType) ?? "text/html"
        const mediaType = contentType.split(";")[0]!.trim().toLowerCase()
        const html = HTML_TYPES.test(mediaType)
        if (!html && !TEXT_TYPES.test(mediaType)) {
          discard(response.body)
          throw new PageFetchError({ message: `refused: ${url.href} is ${mediaType}, not a text or HTML page` })
        }
        const declared = Number(response.headers["content-length"])
        if (Number.isFinite(declared) && declared > maxBytes) {
          discard(response.body)
          throw new PageFetchError({ message: `refused: ${url.href} is larger than the ${maxBytes}-byte limit` })
        }
        const body = decode(await readLimited(response.body, url), contentType)
        const page = html ? await extractInWorker(url, body, extractTimeoutMs, signal) : { title: "", text: body.trim() }
        return { requestedUrl: requested, url: url.href, title: page.title, contentType: mediaType, text: page.text }
      }
    }

    const fetch = (url: string): Effect.Effect<FetchedPage, PageFetchError> =>
      Effect.tryPromise({
        try: (signal) => fetchOnce(url, signal),
        catch: (cause) => failureOf(url, cause)
      }).pipe(
        Effect.timeoutOrElse({
          duration: timeoutMs,
          orElse: () => Effect.fail(new PageFetchError({ message: `could not fetch ${url}: no complete answer within ${timeoutMs} ms` }))
        })
      )

    return { fetch }
  })
