/**
 * A provider failure as the wire's error (docs/errors.md): 503 `provider_not_configured`
 * naming what to fix, or the fixed 502 `provider_error` body. Logged here, once, with the
 * (already redacted) cause; a client never sees the provider's own words.
 */
import { ProviderFailed, ProviderNotConfigured } from "@switchboard/domain"
import { Effect } from "effect"
import { NOT_CONFIGURED_PREFIX } from "./NotConfigured.ts"
import type { ProviderError } from "./ProviderAdapter.ts"
import { publicReason } from "./ProviderAdapter.ts"

/** The fixed 502 body carries the failure's `reason` (`publicReason`: its kind, never the provider's words). */
export const toWireError = (error: ProviderError): Effect.Effect<never, ProviderFailed | ProviderNotConfigured> =>
  error.reason === "NotConfigured"
    ? Effect.logWarning("LLM provider not configured", error.message).pipe(
      Effect.andThen(Effect.fail(
        new ProviderNotConfigured({
          // The configuration's own sentence (`NotConfigured.ts`): "missing LLM_API_KEY", or what is wrong with
          // a variable that is set ("the LLM_SCRIPT file … cannot be read"), which "missing LLM_SCRIPT" misreported.
          error: error.message.startsWith(NOT_CONFIGURED_PREFIX)
            ? error.message
            : `${NOT_CONFIGURED_PREFIX}${
              error.missing && error.missing.length > 0 ? `missing ${error.missing.join(", ")}` : error.message
            }`,
          missing: error.missing ?? []
        })
      ))
    )
    : Effect.logError("LLM provider error", { reason: error.reason, status: error.status, cause: error.message }).pipe(
      Effect.andThen(Effect.fail(new ProviderFailed({ reason: publicReason(error) })))
    )
