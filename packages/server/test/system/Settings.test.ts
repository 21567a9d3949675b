/**
 * An invalid setting stops the server with one line naming the variable, the
 * value and what is accepted — no stack trace, a non-zero exit.
 * Each value is tried on a real process (the production build, as `npm start`
 * runs it), as is a port that is already taken; a missing provider still
 * starts (`StartUp.test.ts`). The list must hold every setting a module
 * declares, or a new one would escape the check.
 */
import { assert, describe, it } from "@effect/vitest"
import { providerVariables } from "@switchboard/providers"
import { Config, ConfigProvider, Effect, Exit } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import type { AddressInfo, Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { BUILT_SERVER_MAIN } from "../../../../scripts/build.ts"
import { hasConfig } from "../../src/process/Setting.ts"
import { declaredRules } from "../../src/process/SettingRule.ts"
// The whole server, and with it every module that declares a setting.
import "../../src/Server.ts"
import { invalidSettings, SETTINGS } from "../../src/system/Settings.ts"
import { startupFailureLines } from "../../src/system/StartupFailure.ts"

const CONFIGURATION_MD = fileURLToPath(new URL("../../../../docs/configuration.md", import.meta.url))

interface Outcome {
  readonly code: number | null
  readonly stderr: string
}

/** Runs the built server with `vars` over an environment free of every setting; kills it if it starts. */
const runServer = (vars: Record<string, string>, dataDir: string) =>
  new Promise<Outcome>((resolve) => {
    const env: Record<string, string> = {}
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined && !SETTINGS.some((s) => s.name === key)) env[key] = value
    }
    const child = spawn(process.execPath, [BUILT_SERVER_MAIN], {
      env: { ...env, DATA_DIR: dataDir, ...vars },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk.slice(0, 64 * 1024))
    // A refusal comes before the database starts, in well under a second; one that starts is a failure.
    const limit = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.once("exit", (code) => {
      clearTimeout(limit)
      resolve({ code, stderr })
    })
  })

const assertRefused = (outcome: Outcome, name: string, shown: string | undefined) => {
  const label = `${name}: ${JSON.stringify(outcome)}`
  assert.isNotNull(outcome.code, label)
  assert.notStrictEqual(outcome.code, 0, label)
  const lines = outcome.stderr.trimEnd().split("\n")
  assert.strictEqual(lines.length, 1, label)
  assert.match(lines[0]!, /^Refusing to start: /, label)
  assert.include(lines[0], name, label)
  if (shown !== undefined) assert.include(lines[0], shown, label)
  assert.notInclude(outcome.stderr, "    at ", label)
  assert.match(lines[0]!, /\(expected .+\)$|: set /, label)
}

const KEY = Buffer.alloc(32, 7).toString("base64")

/** Each invalid value, and the part of the line that shows it (undefined for a credential: never shown). */
const INVALID: ReadonlyArray<readonly [Record<string, string>, string, string | undefined]> = [
  [{ PORT: "abc" }, "PORT", `"abc"`],
  [{ PORT: "70000" }, "PORT", `"70000"`],
  [{ PORT: "" }, "PORT", `""`],
  [{ HOST: "" }, "HOST", `""`],
  [{ CHAT_MAX_MESSAGES: "0" }, "CHAT_MAX_MESSAGES", `"0"`],
  [{ CHAT_TRANSCRIPT_MAX_MESSAGES: "0" }, "CHAT_TRANSCRIPT_MAX_MESSAGES", `"0"`],
  [{ CHAT_TRANSCRIPT_MAX_BYTES: "8MiB" }, "CHAT_TRANSCRIPT_MAX_BYTES", `"8MiB"`],
  [{ PLANNER_MAX_STEPS: "0" }, "PLANNER_MAX_STEPS", `"0"`],
  [{ JOB_MAX_ACTIVE_PER_CHAT: "-1" }, "JOB_MAX_ACTIVE_PER_CHAT", `"-1"`],
  [{ CHAT_RPM: "0" }, "CHAT_RPM", `"0"`],
  [{ CHAT_RPM: "ten" }, "CHAT_RPM", `"ten"`],
  [{ CORS_ORIGINS: "app.example" }, "CORS_ORIGINS", `"app.example"`],
  [{ CORS_ORIGINS: "https://app.example/path" }, "CORS_ORIGINS", `"https://app.example/path"`],
  [{ DATABASE_URL: "mysql://u:pw-secret@db/x" }, "DATABASE_URL", undefined],
  [{ DATABASE_WAIT_SECONDS: "-1" }, "DATABASE_WAIT_SECONDS", `"-1"`],
  [{ DATABASE_MAX_CONNECTIONS: "many" }, "DATABASE_MAX_CONNECTIONS", `"many"`],
  [{ DATA_DIR: "" }, "DATA_DIR", `""`],
  [{ LLM_PROVIDER: "openai" }, "LLM_PROVIDER", `"openai"`],
  [{ LLM_BASE_URL: "api.openai.com/v1" }, "LLM_BASE_URL", `"api.openai.com/v1"`],
  [{ LLM_TIMEOUT_MS: "30s" }, "LLM_TIMEOUT_MS", `"30s"`],
  [{ LLM_TRANSPORT: "fetch" }, "LLM_TRANSPORT", `"fetch"`],
  [{ LLM_MAX_TOKENS: "0" }, "LLM_MAX_TOKENS", `"0"`],
  [{ LLM_PROVIDER: "scripted", LLM_SCRIPT: "/nowhere/script.json" }, "LLM_SCRIPT", "cannot be read"],
  [{ LOG_LEVEL: "verbose" }, "LOG_LEVEL", `"verbose"`],
  [{ LOG_FORMAT: "xml" }, "LOG_FORMAT", `"xml"`],
  [{ TRACING: "yes" }, "TRACING", `"yes"`],
  [{ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT", `"collector:4318"`],
  [{ OTEL_CAPTURE_CONTENT: "true" }, "OTEL_CAPTURE_CONTENT", `"true"`],
  [{ SCHEMA_JIT: "false" }, "SCHEMA_JIT", `"false"`],
  [{ PRETENURING: "true" }, "PRETENURING", `"true"`],
  [{ HEAP_GROWING_PERCENT: "12.5" }, "HEAP_GROWING_PERCENT", `"12.5"`],
  [{ JOB_CONCURRENCY: "0" }, "JOB_CONCURRENCY", `"0"`],
  [{ JOB_TIMEOUT_MS: "10 minutes" }, "JOB_TIMEOUT_MS", `"10 minutes"`],
  [{ JOB_LEASE_MS: "x" }, "JOB_LEASE_MS", `"x"`],
  [{ JOB_SWEEP_MS: "-5" }, "JOB_SWEEP_MS", `"-5"`],
  [{ SEARCH_URL: "searx" }, "SEARCH_URL", `"searx"`],
  [{ FETCH_ALLOW_PRIVATE: "sometimes" }, "FETCH_ALLOW_PRIVATE", `"sometimes"`],
  [{ JOB_VISUAL_VISION: "2" }, "JOB_VISUAL_VISION", `"2"`],
  [{ TURN_MARKER_GRACE_MS: "soon" }, "TURN_MARKER_GRACE_MS", `"soon"`],
  [{ CREDENTIAL_KEY: "not-a-key-at-all" }, "CREDENTIAL_KEY", undefined],
  [{ CREDENTIAL_KEY: KEY, CREDENTIAL_KEY_PREVIOUS: "c2hvcnQ=" }, "CREDENTIAL_KEY_PREVIOUS", undefined],
  [{ PLANNER_DECISION_RETENTION: "7 weeks" }, "PLANNER_DECISION_RETENTION", `"7 weeks"`],
  [{ PLANNER_HOST_DAILY_TOKENS: "a lot" }, "PLANNER_HOST_DAILY_TOKENS", `"a lot"`],
  [{ PLANNER_PRUNE_INTERVAL_SECONDS: "0" }, "PLANNER_PRUNE_INTERVAL_SECONDS", `"0"`],
  [{ PLANNER_PRUNE_BATCH_SIZE: "lots" }, "PLANNER_PRUNE_BATCH_SIZE", `"lots"`],
  [{ PLANNER_PRUNE_BATCH_MILLIS: "0.5" }, "PLANNER_PRUNE_BATCH_MILLIS", `"0.5"`],
  [{ PLANNER_HOST_RPM: "-3" }, "PLANNER_HOST_RPM", `"-3"`],
  [{ PLANNER_HOST_RPM: "1.5" }, "PLANNER_HOST_RPM", `"1.5"`],
  [{ TASK_LEASE_SECONDS: "100000" }, "TASK_LEASE_SECONDS", `"100000"`]
]

const listen = (server: Server) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  })

describe("invalid settings", () => {
  it.live("each invalid value stops the process with one line naming the variable, the value and what is accepted", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "switchboard-settings-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
      // Two at a time: each is a Node process loading the server's modules.
      const outcomes = yield* Effect.forEach(
        INVALID,
        ([vars]) => Effect.promise(() => runServer(vars, dataDir)),
        { concurrency: 2 }
      )
      INVALID.forEach(([vars, name, shown], i) => {
        assertRefused(outcomes[i]!, name, shown)
        // A credential's value never reaches the output, whole or in part.
        if (shown === undefined) assert.notInclude(outcomes[i]!.stderr, vars[name]!.slice(4, 14), name)
      })
    }).pipe(Effect.scoped), { timeout: 300_000 })

  it.live("a port already in use: one line saying so, naming PORT and HOST", () =>
    Effect.gen(function*() {
      const dataDir = mkdtempSync(join(tmpdir(), "switchboard-settings-"))
      const taken = createServer()
      yield* Effect.addFinalizer(() =>
        Effect.promise(() => new Promise<void>((resolve) => taken.close(() => resolve()))).pipe(
          Effect.andThen(Effect.sync(() => rmSync(dataDir, { recursive: true, force: true })))
        )
      )
      const port = yield* Effect.promise(() => listen(taken))
      const outcome = yield* Effect.promise(() => runServer({ PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" }, dataDir))
      assertRefused(outcome, "PORT", `127.0.0.1:${port}`)
      assert.include(outcome.stderr, "already in use")
      assert.include(outcome.stderr, "HOST")
    }).pipe(Effect.scoped), { timeout: 120_000 })

  it("blank provider, sub-agent and credential variables count as unset; the defaults are all valid", () => {
    assert.deepStrictEqual(invalidSettings({}), [])
    assert.deepStrictEqual(
      invalidSettings({ LLM_PROVIDER: " ", LLM_TIMEOUT_MS: "", CREDENTIAL_KEY: "", SEARCH_URL: "", CORS_ORIGINS: "" }),
      []
    )
    assert.deepStrictEqual(
      invalidSettings({
        PORT: "8787",
        HOST: "0.0.0.0",
        LLM_PROVIDER: "anthropic",
        LLM_TRANSPORT: "sdk",
        CORS_ORIGINS: "https://a.example, http://localhost:5173/,*",
        CREDENTIAL_KEY: KEY,
        DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/postgres",
        PLANNER_DECISION_RETENTION: "36 hours",
        FETCH_ALLOW_PRIVATE: "ON",
        HEAP_GROWING_PERCENT: "0"
      }),
      []
    )
    // Several invalid values: one line each.
    assert.strictEqual(invalidSettings({ PORT: "x", LOG_LEVEL: "x", TRACING: "x" }).length, 3)
  })

  it("a value the rule lets through but the feature's config cannot read is refused all the same", () => {
    // Not declared with `setting`: the list's own test would find it missing from the list.
    const probe = { name: "PROBE_SECONDS", blankIsUnset: true, config: Config.Int("PROBE_SECONDS").pipe(Config.withDefault(1)) }
    assert.deepStrictEqual(invalidSettings({ PROBE_SECONDS: "7" }, [probe]), [])
    assert.deepStrictEqual(invalidSettings({ PROBE_SECONDS: " " }, [probe]), [])
    assert.deepStrictEqual(invalidSettings({ PROBE_SECONDS: "soon" }, [probe]), [
      'invalid PROBE_SECONDS "soon" (expected a string representing a finite number)'
    ])
    assert.deepStrictEqual(invalidSettings({ PROBE_SECONDS: "soon" }, [{ ...probe, expected: "a whole number of seconds" }]), [
      'invalid PROBE_SECONDS "soon" (expected a whole number of seconds)'
    ])
  })

  it("the list holds every setting declared, once, each read with nothing set", () => {
    const listed = new Set(SETTINGS)
    assert.deepStrictEqual(declaredRules().filter((rule) => !listed.has(rule)).map((rule) => rule.name), [])
    const names = SETTINGS.map((s) => s.name)
    assert.deepStrictEqual(names.filter((name, i) => names.indexOf(name) !== i), [])
    // The providers package reads its own variables: each must have its rule here.
    assert.deepStrictEqual(providerVariables.filter((name) => !names.includes(name)), [])
    const empty = ConfigProvider.fromEnvRecord({})
    for (const setting of SETTINGS.filter(hasConfig)) {
      assert.isTrue(Exit.isSuccess(Effect.runSyncExit(setting.config.parse(empty))), setting.name)
    }
  })

  it("docs/configuration.md's tables name exactly the listed variables", () => {
    // The server's tables: everything above the CLI's, whose variables are the CLI's own.
    const server = readFileSync(CONFIGURATION_MD, "utf8").split("\n## CLI")[0]!
    const documented = new Set<string>()
    for (const row of server.split("\n").filter((line) => line.startsWith("| `"))) {
      for (const match of row.split("|")[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) documented.add(match[1]!)
    }
    assert.deepStrictEqual([...documented].sort(), SETTINGS.map((s) => s.name).sort())
  })
})

describe("a start that got further", () => {
  it.effect("Effect's ConfigError becomes the same line: the variable from the schema's path, the table's expectation", () =>
    Effect.gen(function*() {
      const env = { PORT: "abc", CREDENTIAL_KEY: "sekrit-value" }
      const read = (config: Config.Config<unknown>) =>
        Effect.exit(config.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))))
      const port = yield* read(Config.Port("PORT"))
      assert.isTrue(Exit.isFailure(port))
      if (Exit.isFailure(port)) {
        assert.deepStrictEqual(startupFailureLines(port.cause, env), ['invalid PORT "abc" (expected a port number from 1 to 65535)'])
      }
      const key = yield* read(Config.Int("CREDENTIAL_KEY"))
      if (Exit.isFailure(key)) {
        const [line] = startupFailureLines(key.cause, env) ?? []
        assert.include(line, "invalid CREDENTIAL_KEY (value hidden, 12 characters)")
        assert.notInclude(line, "sekrit")
      } else assert.fail("a non-number read as Int")
      // Not a configuration problem: left to the runtime's own report.
      const other = yield* Effect.exit(Effect.fail(new Error("boom")))
      if (Exit.isFailure(other)) assert.isUndefined(startupFailureLines(other.cause, env))
    }))
})

// LLM_SCRIPT is checked against the file system, not only as a value.
describe("LLM_SCRIPT", () => {
  it("is checked only with the scripted provider, and only for being a readable file", () => {
    const dir = mkdtempSync(join(tmpdir(), "switchboard-script-"))
    try {
      const script = join(dir, "s.json")
      writeFileSync(script, "{}")
      assert.deepStrictEqual(invalidSettings({ LLM_PROVIDER: "scripted", LLM_SCRIPT: script }), [])
      assert.deepStrictEqual(invalidSettings({ LLM_PROVIDER: "anthropic", LLM_SCRIPT: join(dir, "absent.json") }), [])
      const [line] = invalidSettings({ LLM_PROVIDER: "scripted", LLM_SCRIPT: dir })
      assert.include(line, "is not a file")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
