/**
 * A streamed turn's failure after its 200, as the `error` chunk says it
 * (docs/streaming.md): the sentence the JSON answer would have carried before
 * the stream started — never the provider's own words, never a stack.
 */
import { Cause, Option } from "effect"
import { NOT_CONFIGURED_PREFIX, ProviderError } from "@switchboard/providers"

export const errorText = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.findErrorOption(cause)
  if (Option.isSome(error)) {
    const failure = error.value
    if (failure instanceof ProviderError) {
      if (failure.reason !== "NotConfigured") return "LLM provider error"
      return failure.message.startsWith(NOT_CONFIGURED_PREFIX) ? failure.message : `${NOT_CONFIGURED_PREFIX}${failure.message}`
    }
    if (typeof failure === "object" && failure !== null && "error" in failure && typeof failure.error === "string") {
      return failure.error
    }
  }
  // Only a turn tied to its request (a JSON one) ends with its client; any ends with its server.
  if (Cause.hasInterruptsOnly(cause)) {
    return "The turn was interrupted: the client that asked for it went away, or the server is stopping. The transcript holds what was stored"
  }
  return "Internal server error"
}
