/**
 * Secret redaction for provider error messages.
 *
 * A `ProviderError`'s message ends up in logs, and a provider's own error text
 * may echo what it was sent (an "incorrect API key: sk-…" answer, a proxy that
 * dumps request headers). Every message built from a cause or a response body
 * therefore goes through `redact` with the secrets the caller holds, before it
 * leaves the adapter.
 */

export const REDACTED = "[REDACTED]"

// Whatever follows "Bearer" is a credential, even one we don't know (a proxy's own token).
const bearerPattern = /\bBearer\s+[^\s"',;]+/gi

// Likewise the value of an `x-api-key` header (Anthropic's credential) quoted in a text: `x-api-key: …`,
// `"x-api-key":"…"`, `x-api-key=…`. The name alone ("invalid x-api-key") is not a value.
const apiKeyHeaderPattern = /\b(x-api-key["']?\s*[:=]\s*["']?)[^\s"',;}]+/gi

/**
 * Replaces every occurrence of each non-empty secret, any `Bearer <token>` and
 * any `x-api-key` header value with `[REDACTED]`.
 */
export const redact = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  // Longest first, so a secret that contains another is replaced whole.
  for (const secret of [...secrets].filter((s) => s.length > 0).sort((a, b) => b.length - a.length)) {
    out = out.split(secret).join(REDACTED)
  }
  return out.replace(bearerPattern, `Bearer ${REDACTED}`).replace(apiKeyHeaderPattern, `$1${REDACTED}`)
}

/**
 * A one-line description of a thrown value, `cause` chain included (undici and
 * fetch hide the useful part, e.g. `ECONNREFUSED`, in `error.cause`), redacted.
 */
export const describeCause = (cause: unknown, secrets: ReadonlyArray<string>): string => {
  const parts: Array<string> = []
  let current: unknown = cause
  // A bounded walk: cause chains can be cyclic.
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    if (current instanceof Error) {
      const code = (current as { code?: unknown }).code
      // "Connection error." + ": fetch failed" reads better without the period.
      const text = (current.message || current.name).replace(/\.$/, "")
      parts.push(typeof code === "string" && !text.includes(code) ? `${text} (${code})` : text)
      current = current.cause
    } else {
      parts.push(String(current))
      break
    }
  }
  return redact(parts.filter((p) => p.length > 0).join(": ") || "unknown error", secrets)
}

/** At most `max` characters of `text`, for quoting a response body in a message. */
export const truncate = (text: string, max = 300): string =>
  text.length <= max ? text : `${text.slice(0, max)}…`

/** A URL fit for logs: origin and path only (user info and query strings may hold credentials). */
export const displayUrl = (raw: string): string => {
  try {
    const url = new URL(raw)
    return `${url.origin}${url.pathname}`
  } catch {
    return "(invalid URL)"
  }
}
