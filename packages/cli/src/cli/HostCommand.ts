/**
 * `switchboard host run`: a host agent (`@switchboard/host-agent`) against a
 * Switchboard server, with the host id and token `switchboard admin hosts add`
 * printed.
 *
 * `--transport cloud-proxy` (default) asks the cloud for every decision and
 * needs no provider key; `--transport direct` calls the provider named by the
 * host's own `LLM_PROVIDER` / `LLM_MODEL` / `LLM_API_KEY` / `LLM_BASE_URL`
 * (the server's chat-route variables, the host agent's `DirectPlanner`) and leaves
 * nothing in the cloud's decision log. One line per step on stdout.
 *
 * Exit codes: with `--once`, 0 when the task succeeded and 1 otherwise; 1
 * when the token or host id is refused or the options are wrong; 130 after
 * SIGINT/SIGTERM (the task under way is reported failed, "host shutting down").
 */
import { Config, Console, Effect, Layer, Option, Redacted } from "effect"
import { Command, Flag } from "effect/cli"
import { ApiClient } from "@switchboard/client"
import {
  CloudProxyPlanner,
  ControlPlane,
  defaultMaxSteps,
  defaultPlannerRetries,
  defaultRetryDelay,
  defaultShellOutputBytes,
  defaultShellTimeoutMs,
  loadDirectPlanner,
  makeHostRegistry,
  runHostAgent
} from "@switchboard/host-agent"
import { serverFlag } from "./ServerFlag.ts"
import { CliFailure, failWith } from "./CliFailure.ts"

const fail = failWith

/** `--allow ls --allow git,make` → ["ls", "git", "make"]. */
export const parseAllowList = (values: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...new Set(values.flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== ""))
]

const hostRun = Command.make("run", {
  server: serverFlag,
  hostId: Flag.String("host-id").pipe(
    Flag.withDescription("This host's id, from `switchboard admin hosts add` (env SWITCHBOARD_HOST_ID)"),
    Flag.withMetavar("HOST_ID"),
    Flag.withFallbackConfig(Config.String("SWITCHBOARD_HOST_ID"))
  ),
  token: Flag.Redacted("token").pipe(
    Flag.withDescription("This host's token (env SWITCHBOARD_HOST_TOKEN; prefer the variable: flags show in ps)"),
    Flag.withMetavar("TOKEN"),
    Flag.withFallbackConfig(Config.Redacted("SWITCHBOARD_HOST_TOKEN"))
  ),
  transport: Flag.Literals("transport", ["cloud-proxy", "direct"]).pipe(
    Flag.withDescription("cloud-proxy: decisions from the server, no provider key here; direct: this host's LLM_* provider"),
    Flag.withDefault("cloud-proxy")
  ),
  workdir: Flag.String("workdir").pipe(
    Flag.withDescription("The only directory read_file / write_file / shell may touch (default: the current one)"),
    Flag.withMetavar("DIR"),
    Flag.withDefault(".")
  ),
  allow: Flag.String("allow").pipe(
    Flag.withDescription("A program the shell tool may run (repeat, or comma-separate); none: no shell tool"),
    Flag.withMetavar("COMMAND"),
    Flag.atLeast(0)
  ),
  maxSteps: Flag.Int("max-steps").pipe(
    Flag.withDescription(`Decisions per task before it is failed (default ${defaultMaxSteps})`),
    Flag.withDefault(defaultMaxSteps)
  ),
  shellTimeoutMs: Flag.Int("shell-timeout-ms").pipe(
    Flag.withDescription(`Time limit of one shell command (default ${defaultShellTimeoutMs})`),
    Flag.withDefault(defaultShellTimeoutMs)
  ),
  screenshotCommand: Flag.String("screenshot-command").pipe(
    Flag.withDescription("A program (split on spaces, no shell) writing a PNG of the screen to stdout, run before each step"),
    Flag.withMetavar("COMMAND"),
    Flag.optional
  ),
  once: Flag.Boolean("once").pipe(
    Flag.withDescription("Exit after one task (waits for one to be queued); exit code 0 when it succeeded"),
    Flag.withDefault(false)
  )
}, (flags) =>
  Effect.gen(function*() {
    if (flags.maxSteps < 1) return yield* fail("--max-steps must be at least 1")
    if (flags.shellTimeoutMs < 1) return yield* fail("--shell-timeout-ms must be at least 1")
    const token = Redacted.value(flags.token).trim()
    if (token === "") return yield* fail("no host token: pass --token or set SWITCHBOARD_HOST_TOKEN")
    const allow = parseAllowList(flags.allow)
    const { registry, workdir } = yield* makeHostRegistry({
      workdir: flags.workdir,
      shell: { allow, timeoutMs: flags.shellTimeoutMs, maxOutputBytes: defaultShellOutputBytes }
    }).pipe(Effect.catchTag("WorkdirEscape", (e) => fail(e.message)))

    const planner = flags.transport === "direct"
      // Imported on demand: the provider stack (undici, openai) is not loaded for cloud-proxy, chat or --help.
      ? yield* Effect.promise(loadDirectPlanner).pipe(
        Effect.flatMap((DirectPlanner) => DirectPlanner.fromEnvironment),
        Effect.catch((message) => fail(`--transport direct needs this host's provider settings: ${message}`))
      )
      : CloudProxyPlanner.layerNoDeps(flags.hostId)

    const api = ApiClient.layer({ baseUrl: flags.server, token: flags.token })
    const services = Layer.mergeAll(ControlPlane.layerNoDeps(flags.hostId).pipe(Layer.provide(api)), planner).pipe(
      Layer.provide(api)
    )

    yield* Console.log(
      `host ${flags.hostId}: server ${flags.server}, transport ${flags.transport}, workdir ${workdir.root}, ` +
        `tools ${registry.getAll().map((t) => t.name).join(", ")}${flags.once ? ", one task" : ""}`
    )
    const end = yield* runHostAgent({
      loop: {
        registry,
        workdir: workdir.root,
        maxSteps: flags.maxSteps,
        retries: defaultPlannerRetries,
        retryDelay: defaultRetryDelay,
        screenshotCommand: Option.getOrUndefined(flags.screenshotCommand),
        log: (line) => Console.log(line)
      },
      once: flags.once,
      heartbeatInterval: "15 seconds",
      pollMin: "1 second",
      pollMax: "10 seconds"
    }).pipe(
      Effect.scoped,
      Effect.provide(services),
      Effect.catchTag("HostAgentFatal", (e) => fail(e.message))
    )
    if (end._tag === "Reported" && end.result.status === "succeeded") return
    return yield* new CliFailure({
      message: end._tag === "Reported" ? `task ${end.task.taskId} failed` : `task ${end.task.taskId}: ${end.reason}`
    })
  })).pipe(
    Command.withDescription(
      "Run a host agent: heartbeat, claim a task, run the planner loop (one decision per step: finish, fail, " +
        "read_file, write_file, shell) while renewing the lease, report the result. SIGINT/SIGTERM: finish the " +
        "current step, report the task failed (\"host shutting down\"), exit."
    ),
    Command.withShortDescription("Run a host agent")
  )

export const hostCommand = Command.make("host").pipe(
  Command.withDescription("Host agents: carry out queued tasks on this machine, one planner decision per step."),
  Command.withShortDescription("Run a host agent"),
  Command.withSubcommands([hostRun])
)
