/**
 * What every provider transport shares, whichever API it speaks (Chat
 * Completions over undici or the `openai` SDK, Anthropic Messages over undici):
 * the `ProviderError` each kind of failure maps to, with the same reasons and
 * the same wording, every message redacted; endpoint URLs; and the per-call
 * deadline (`LLM_TIMEOUT_MS`), whose interruption aborts the request in flight.
 */
import { Effect, Redacted } from "effect"
import { ProviderError } from "./ProviderAdapter.ts"
import { redact, truncate } from "./Redact.ts"
import { DEFAULT_MAX_RESPONSE_BYTES } from "./ResponseLimit.ts"

/** The secrets a transport's messages must never contain. */
export const secretsOf = (settings: { readonly apiKey: Redacted.Redacted<string> }): ReadonlyArray<string> => [
  Redacted.value(settings.apiKey)
]

/**
 * The provider's own explanation from an error body, else the raw text. OpenAI
 * sends `{ error: { message } }`, Anthropic `{ type: "error", error: { type, message } }`,
 * some compatible servers `{ error: "…" }`.
 */
const errorDetail = (bodyText: string): string => {
  try {
    const parsed: unknown = JSON.parse(bodyText)
    if (typeof parsed === "object" && parsed !== null && "error" in parsed) {
      const error = (parsed as { error: unknown }).error
      if (typeof error === "string") return error
      if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
        return error.message
      }
    }
  } catch {
    // not JSON: quote the text itself
  }
  return bodyText.trim()
}

export const statusError = (status: number, bodyText: string, secrets: ReadonlyArray<string>): ProviderError => {
  const detail = errorDetail(bodyText)
  // Redact before truncating, so a cut can never leave half a key behind.
  const quoted = detail === "" ? "" : `: ${truncate(redact(detail, secrets))}`
  return new ProviderError({ reason: "Status", status, message: `Provider answered HTTP ${status}${quoted}` })
}

export const invalidJsonError = (bodyText: string, secrets: ReadonlyArray<string>): ProviderError =>
  new ProviderError({
    reason: "InvalidResponse",
    message: `Provider answered with a body that is not JSON: ${truncate(redact(bodyText.trim(), secrets), 120)}`
  })

export const networkError = (description: string, code?: string): ProviderError =>
  new ProviderError({
    reason: "Network",
    message: `Provider unreachable: ${description}`,
    ...(code === undefined ? {} : { code })
  })

export const timeoutError = (description: string): ProviderError =>
  new ProviderError({ reason: "Timeout", message: `Provider timed out: ${description}` })

export const tooLargeError = (maxBytes: number, what = "answer"): ProviderError =>
  new ProviderError({ reason: "TooLarge", message: `Provider ${what} larger than ${maxBytes} bytes (LLM_MAX_RESPONSE_BYTES): not read further` })

/** The first system error code (`ECONNREFUSED`, `UND_ERR_SOCKET`, …) down a cause chain (fetch hides it in `cause`). */
export const errorCodeOf = (cause: unknown): string | undefined => {
  let current: unknown = cause
  // Bounded: cause chains can be cyclic.
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string") return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** Enough of an error answer (4xx, 5xx) to quote in the log: the rest is not read. */
export const ERROR_BODY_BYTES = 64 * 1024

/** What a bounded read got: the text, and whether more was there than it read. */
export interface BoundedText {
  readonly text: string
  readonly truncated: boolean
}

/**
 * Reads at most `maxBytes` of a body as it streams in; past that it stops
 * (`truncated`) and calls `abort`, which must end the transfer, so an
 * oversized answer costs `maxBytes` of memory and no more waiting.
 */
export const readBounded = async (
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
  abort: () => void
): Promise<BoundedText> => {
  const chunks: Array<Uint8Array> = []
  let total = 0
  for await (const chunk of body) {
    if (total + chunk.byteLength > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - total))
      abort()
      return { text: Buffer.concat(chunks).toString("utf8"), truncated: true }
    }
    chunks.push(chunk)
    total += chunk.byteLength
  }
  return { text: Buffer.concat(chunks).toString("utf8"), truncated: false }
}

/** A `content-length` that already says the body is too large (absent or unreadable: not known). */
export const declaredTooLarge = (contentLength: string | null | undefined, maxBytes: number): boolean => {
  const n = Number(contentLength ?? "")
  return contentLength !== undefined && contentLength !== null && contentLength !== "" && Number.isFinite(n) && n > maxBytes
}

/** The settings' bound on one answer, the default when they name none. */
export const maxResponseBytesOf = (settings: { readonly maxResponseBytes?: number | undefined }): number =>
  settings.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES

/** `{baseUrl}{path}`, tolerating a trailing slash on the base URL. */
export const endpointUrl = (baseUrl: string, path: string): URL => new URL(`${baseUrl.replace(/\/+$/, "")}${path}`)

/**
 * Fails with `Timeout` after `timeoutMs`. The interruption is what aborts the
 * HTTP request (the transports hand Effect's AbortSignal to the client), so
 * this is the only deadline: the transports set none of their own.
 */
export const withDeadline = (timeoutMs: number, what: string) =>
  Effect.timeoutOrElse({
    duration: timeoutMs,
    orElse: () => Effect.fail(timeoutError(`no ${what} within ${timeoutMs} ms`))
  })
