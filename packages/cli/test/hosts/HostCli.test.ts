/**
 * `switchboard host run` and `switchboard admin …` as executables, before any
 * server is involved: `--help` on each, and options refused up front (a
 * workdir that is not there, `--transport direct` without the host's own
 * provider settings), each with a sentence and exit code 1.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as path from "node:path"
import { parseAllowList } from "../../src/cli/HostCommand.ts"
import { tempDir } from "@switchboard/client/testing"
import { runCli } from "../support/RunCli.ts"

const hostEnv = {
  SWITCHBOARD_HOST_ID: "host_x",
  SWITCHBOARD_HOST_TOKEN: "token_x",
  LLM_PROVIDER: undefined,
  LLM_MODEL: undefined,
  LLM_API_KEY: undefined
}

describe("host and admin commands", () => {
  it.effect("--help: the top level lists host and admin; each command documents its flags", () =>
    Effect.gen(function*() {
      const top = yield* runCli(["--help"])
      assert.include(top.stdout, "host")
      assert.include(top.stdout, "admin")
      const run = yield* runCli(["host", "run", "--help"])
      assert.strictEqual(run.code, 0)
      for (const flag of ["--server", "--host-id", "--token", "--transport", "--workdir", "--allow", "--max-steps", "--screenshot-command", "--once"]) {
        assert.include(run.stdout, flag)
      }
      const admin = yield* runCli(["admin", "--help"])
      for (const sub of ["hosts", "tasks", "profiles", "decisions", "prune", "rotate-credential-key", "--token"]) {
        assert.include(admin.stdout, sub)
      }
      const profilesAdd = yield* runCli(["admin", "profiles", "add", "--help"])
      for (const flag of ["--name", "--provider", "--model", "--base-url", "--api-key", "--activate", "SWITCHBOARD_PROFILE_API_KEY"]) {
        assert.include(profilesAdd.stdout, flag)
      }
    }), 120_000)

  it.effect("a workdir that does not exist, or direct transport without LLM_* settings: exit 1 with the reason", () =>
    Effect.gen(function*() {
      const missing = path.join(tempDir(), "nope")
      const noDir = yield* runCli(["host", "run", "--server", "http://127.0.0.1:9", "--workdir", missing], { env: hostEnv })
      assert.strictEqual(noDir.code, 1)
      assert.include(noDir.stderr, `workdir ${missing} is not a usable directory`)
      const direct = yield* runCli(["host", "run", "--server", "http://127.0.0.1:9", "--workdir", tempDir(), "--transport", "direct"], {
        env: hostEnv
      })
      assert.strictEqual(direct.code, 1)
      assert.include(direct.stderr, "--transport direct needs this host's provider settings")
      assert.include(direct.stderr, "LLM_API_KEY")
    }), 120_000)

  it.effect("--allow takes repeated flags and comma lists", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(parseAllowList(["ls", "git,make", " ls ,", ""]), ["ls", "git", "make"])
    }))
})
