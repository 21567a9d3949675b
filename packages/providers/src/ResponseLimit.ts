/**
 * `LLM_MAX_RESPONSE_BYTES`: the most the server reads of one provider answer
 * (every transport, every provider, the planner's profiles included). Past it
 * the read is aborted — the rest is never buffered — and the call fails with
 * `TooLarge` (502 `provider_error`, reason `too_large`).
 *
 * Default 4 MiB: a real answer is far smaller (128 k output tokens are about
 * 0.5 MiB of text, twice that JSON-escaped), and it matches what one stored
 * message may hold (`maxStoredValueBytes`), so an answer the server reads is
 * one it can store. Pure and free of Effect: the settings checked before
 * anything starts (`system/Settings.ts`) hold the variable to the same range.
 */

export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024
export const MIN_MAX_RESPONSE_BYTES = 1024
export const MAX_MAX_RESPONSE_BYTES = 256 * 1024 * 1024

export type ResponseLimit =
  | { readonly _tag: "Bytes"; readonly bytes: number }
  | { readonly _tag: "Invalid"; readonly message: string }

/** The limit from the environment: unset or blank is the default; anything but a whole number in range is refused. */
export const responseLimitFor = (env: Readonly<Record<string, string | undefined>>): ResponseLimit => {
  const raw = env["LLM_MAX_RESPONSE_BYTES"]?.trim() ?? ""
  if (raw === "") return { _tag: "Bytes", bytes: DEFAULT_MAX_RESPONSE_BYTES }
  const bytes = Number(raw)
  if (/^\d{1,10}$/.test(raw) && bytes >= MIN_MAX_RESPONSE_BYTES && bytes <= MAX_MAX_RESPONSE_BYTES) {
    return { _tag: "Bytes", bytes }
  }
  return {
    _tag: "Invalid",
    message: `LLM_MAX_RESPONSE_BYTES must be a whole number of bytes from ${MIN_MAX_RESPONSE_BYTES} to ` +
      `${MAX_MAX_RESPONSE_BYTES} (default ${DEFAULT_MAX_RESPONSE_BYTES}, 4 MiB), got ${JSON.stringify(raw.slice(0, 40))}`
  }
}
