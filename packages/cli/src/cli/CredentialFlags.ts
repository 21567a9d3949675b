/**
 * `--token` and `--user`, shared by the commands that talk to a server's
 * `/api/*` (docs/users.md): the bearer token — a user's JWT, or the server's
 * `CHAT_TOKEN` — and, with `CHAT_TOKEN`, the user the command acts for
 * (`X-Switchboard-User`). A token the server refuses (401 `unauthenticated`)
 * is said in one line, naming the token, not the turn.
 */
import { Config, Option, Redacted } from "effect"
import type { ApiClientOptions } from "@switchboard/client"
import { Flag } from "effect/cli"

/** `--token`, else `SWITCHBOARD_TOKEN`, else `CHAT_TOKEN`. */
export const tokenFlag = Flag.Redacted("token").pipe(
  Flag.withDescription(
    "Bearer token for /api/*: a user's JWT, or the server's CHAT_TOKEN (env SWITCHBOARD_TOKEN, then CHAT_TOKEN; " +
      "prefer the variables: flags show in ps)"
  ),
  Flag.withMetavar("TOKEN"),
  Flag.withFallbackConfig(Config.Redacted("SWITCHBOARD_TOKEN").pipe(Config.orElse(() => Config.Redacted("CHAT_TOKEN")))),
  Flag.optional
)

/** `--user`, else `SWITCHBOARD_USER`. */
export const userFlag = Flag.String("user").pipe(
  Flag.withDescription(
    "The user to act for, sent as X-Switchboard-User (with CHAT_TOKEN as the token; a JWT's own user wins; " +
      "env SWITCHBOARD_USER)"
  ),
  Flag.withMetavar("NAME"),
  Flag.withFallbackConfig(Config.String("SWITCHBOARD_USER")),
  Flag.optional
)

export interface CredentialFlags {
  readonly server: string
  readonly token: Option.Option<Redacted.Redacted<string>>
  readonly user: Option.Option<string>
}

/** The API client's options for the flags. */
export const apiOptions = ({ server, token, user }: CredentialFlags): ApiClientOptions => ({
  baseUrl: server,
  token: Option.getOrUndefined(token),
  user: Option.getOrUndefined(user)
})

const hasToken = (token: CredentialFlags["token"]) => Option.isSome(token) && Redacted.value(token.value).trim() !== ""

/**
 * What the terminal says of a failed call: a 401 `unauthenticated` as the token's fault, in one
 * line (the server's sentence after it), anything else as its message.
 */
export const failureLine = (
  failure: { readonly message: string; readonly code?: string | undefined },
  token: CredentialFlags["token"]
): string => {
  if (failure.code !== "unauthenticated") return failure.message
  return hasToken(token)
    ? `the server refused the token: ${failure.message}`
    : `the server wants a token (pass --token or set CHAT_TOKEN): ${failure.message}`
}
