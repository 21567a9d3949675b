/**
 * What every `switchboard admin` subcommand shares: the `admin` command with its `--server` and
 * `--token` (else `ADMIN_TOKEN`), the typed client under that token (`withAdmin`: a failure is
 * printed as the server's sentence), `--json`, and the output helpers.
 */
import type { Api } from "@switchboard/domain"
import { ApiClient, describeApiFailure } from "@switchboard/client"
import { Config, Console, Effect, Option, Redacted } from "effect"
import { Command, Flag } from "effect/cli"
import type { HttpApiClient } from "effect/http-api"
import { CliFailure, failWith } from "./CliFailure.ts"
import { serverFlag } from "./ServerFlag.ts"

export const adminRoot = Command.make("admin").pipe(
  Command.withSharedFlags({
    server: serverFlag,
    token: Flag.Redacted("token").pipe(
      Flag.withDescription("The server's ADMIN_TOKEN (env ADMIN_TOKEN)"),
      Flag.withMetavar("TOKEN"),
      Flag.withFallbackConfig(Config.Redacted("ADMIN_TOKEN")),
      Flag.optional
    )
  })
)

export const jsonFlag = Flag.Boolean("json").pipe(Flag.withDescription("Print the server's JSON answer"), Flag.withDefault(false))

export const fail = failWith

export type Client = HttpApiClient.ForApi<typeof Api>

/** Runs `f` with the typed client under the admin token; a failure is printed as the server's sentence. */
export const withAdmin = <A, E>(f: (client: Client) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const { server, token } = yield* adminRoot
    if (Option.isNone(token) || Redacted.value(token.value).trim() === "") {
      return yield* fail("no admin token: pass --token or set ADMIN_TOKEN")
    }
    return yield* Effect.gen(function*() {
      return yield* f(yield* ApiClient)
    }).pipe(
      Effect.provide(ApiClient.layer({ baseUrl: server, token: token.value })),
      Effect.catch((error) =>
        error instanceof CliFailure ? Effect.fail(error) : describeApiFailure(error).pipe(Effect.flatMap((failure) => fail(failure.message)))
      )
    )
  })

export const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

export const orDash = (value: string | null | undefined) => value === null || value === undefined ? "-" : value

export const hostIdFlag = (description: string) =>
  Flag.String("host-id").pipe(Flag.withDescription(description), Flag.withMetavar("HOST_ID"), Flag.optional)

