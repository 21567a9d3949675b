/**
 * End to end, as an operator and a host would do it: the real server (here,
 * on an ephemeral port, over a test database) with ADMIN_TOKEN and
 * CREDENTIAL_KEY; every step through the `switchboard` executable in its own
 * process — `admin hosts add`, `admin profiles add --activate` (pointing at a
 * local fake OpenAI-compatible provider), `admin tasks add`, `host run`,
 * `admin tasks show`, `admin decisions`.
 *
 * - cloud-proxy: the host process has no OPENAI_API_KEY / ANTHROPIC_API_KEY /
 *   LLM_* at all and still finishes the task (hello.txt written in its
 *   workdir); the provider saw the profile's key and the screenshot; the
 *   decision log has both steps and no screenshot bytes.
 * - direct: the host calls its own provider (examples/fake-planner-provider.ts,
 *   the README's), the task finishes, and the cloud's decision log stays empty.
 * - a decision that takes longer than the lease (TASK_LEASE_SECONDS=6): the
 *   host renews it meanwhile, and its result for attempt 1 is accepted.
 * - SIGTERM during a step: the step finishes, the task is reported failed
 *   with "host shutting down", the process exits 0 (a clean stop: process managers read 130 as a crash).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { FakeOpenAi } from "@switchboard/providers/testing"
import type { RecordedRequest } from "@switchboard/providers/testing"
import { ADMIN_TOKEN, baseUrl, client, CREDENTIAL_KEY, decisionBody, layerPlannerServer, logLines, plannerEnv, postJsonAt } from "@switchboard/server/testing"
import { tempDir } from "@switchboard/client/testing"
import { runCli, spawnCli } from "../support/RunCli.ts"

const adminToken = ADMIN_TOKEN
const profileKey = "sk-cloud-profile-key-e2e"
const root = path.resolve(import.meta.dirname, "../../../..")

/** Each test runs the CLI several times (a second or two each on a busy machine): more than the default 30 s. */
const spawnTimeout = 180_000

/** Nothing a provider could be reached with: the host holds no key. */
const noProviderEnv = {
  OPENAI_API_KEY: undefined,
  ANTHROPIC_API_KEY: undefined,
  LLM_PROVIDER: undefined,
  LLM_MODEL: undefined,
  LLM_API_KEY: undefined,
  LLM_BASE_URL: undefined,
  ADMIN_TOKEN: undefined,
  SWITCHBOARD_HOST_ID: undefined,
  SWITCHBOARD_HOST_TOKEN: undefined
}

const userText = (request: RecordedRequest): string => {
  const messages = (request.body as { messages: Array<{ role: string; content: unknown }> }).messages
  const content = [...messages].reverse().find((m) => m.role === "user")?.content
  if (typeof content === "string") return content
  return (content as Array<{ type: string; text?: string }>).map((p) => p.text ?? "").join("\n")
}

/** The planner's policy: write hello.txt, then finish. */
const plan = (request: RecordedRequest, delayMs?: number): FakeOpenAi.FakeReply => {
  const first = userText(request).includes("No step has been taken yet.")
  const call = first
    ? { name: "write_file", arguments: JSON.stringify({ path: "hello.txt", content: "hello from the cloud planner\n" }) }
    : { name: "finish", arguments: JSON.stringify({ summary: "wrote hello.txt" }) }
  const reply = FakeOpenAi.reply.toolCalls([call])
  return delayMs === undefined || reply.type !== "json" ? reply : { ...reply, delayMs }
}

const admin = (server: string, args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}) =>
  runCli(["admin", ...args, "--server", server], { env: { ...noProviderEnv, ADMIN_TOKEN: adminToken, ...env } })

const ok = <A extends { code: number | null; stderr: string; stdout: string }>(run: A, what: string): A => {
  assert.strictEqual(run.code, 0, `${what}: ${run.stderr}${run.stdout}`)
  return run
}

/** `hosts add` prints `export NAME=value` lines. */
const exportsOf = (stdout: string): Record<string, string> =>
  Object.fromEntries([...stdout.matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]))

const setUp = (server: string, providerUrl: string, name: string) =>
  Effect.gen(function*() {
    const host = exportsOf(ok(yield* admin(server, ["hosts", "add", name]), "hosts add").stdout)
    assert.match(host["SWITCHBOARD_HOST_ID"] ?? "", /\S/)
    assert.isAtLeast((host["SWITCHBOARD_HOST_TOKEN"] ?? "").length, 40, "32 random bytes, encoded")
    const profile = ok(
      yield* admin(server, [
        "profiles", "add", "--name", `fake-${name}`, "--provider", "openai-compatible", "--model", "fake-model",
        "--timeout-ms", "10000", "--base-url", providerUrl, "--activate"
      ], { SWITCHBOARD_PROFILE_API_KEY: profileKey }),
      "profiles add"
    )
    assert.notInclude(profile.stdout + profile.stderr, profileKey)
    const task = ok(
      yield* admin(server, ["tasks", "add", "Write hello.txt", "--host-id", host["SWITCHBOARD_HOST_ID"]!]),
      "tasks add"
    ).stdout.trim()
    assert.match(task, /\S/)
    return { host, taskId: task }
  })

const taskJson = (server: string, taskId: string) =>
  admin(server, ["tasks", "show", taskId, "--json"]).pipe(Effect.map((run) => JSON.parse(ok(run, "tasks show").stdout)))

// The admin CLI is exercised by the first test; the others set up over plain HTTP, which is quicker than a process each.
const setUpOverHttp = (providerUrl: string, name: string) =>
  Effect.gen(function*() {
    const cloud = client(yield* baseUrl)
    const host = yield* cloud.addHost(name)
    const profileId = yield* cloud.addProfile({
      name: `fake-${name}`, provider: "openai-compatible", model: "fake-model", timeoutMs: 10_000, baseUrl: providerUrl, apiKey: profileKey
    })
    yield* cloud.activate(profileId)
    const taskId = yield* cloud.addTask("Write hello.txt", host.hostId)
    return { host: { SWITCHBOARD_HOST_ID: host.hostId, SWITCHBOARD_HOST_TOKEN: host.token }, taskId }
  })

const taskOverHttp = (taskId: string) =>
  Effect.flatMap(baseUrl, (base) => client(base).admin.get(`/admin/tasks/${taskId}`)).pipe(Effect.map((r) => r.json))

describe("switchboard host run against the server", () => {
  layer(
    // A short lease, so that renewal is needed within one test (the host renews at a third of what is left).
    layerPlannerServer(plannerEnv({ TASK_LEASE_SECONDS: "6" })),
    { excludeTestServices: true }
  )("admin CLI + host agent", (it) => {
    it.effect("cloud-proxy: a host with no provider key finishes the task through the proxy; decisions are logged", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const fake = yield* FakeOpenAi.scoped({ apiKey: profileKey })
        fake.respondWith((request) => plan(request))
        const { host, taskId } = yield* setUp(server, fake.url, "proxy-host")

        // A "screenshot": a PNG on stdout, attached to each decision request.
        const workdir = tempDir("switchboard-e2e-work-")
        const shot = path.join(tempDir(), "shot.mjs")
        const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from("e2e-screen")])
        fs.writeFileSync(shot, `process.stdout.write(Buffer.from(${JSON.stringify(png.toString("base64"))}, "base64"))`)

        const run = yield* runCli(
          ["host", "run", "--server", server, "--workdir", workdir, "--once", "--screenshot-command", `${process.execPath} ${shot}`],
          { env: { ...noProviderEnv, ...host } }
        )
        assert.strictEqual(run.code, 0, run.stderr + run.stdout)
        assert.include(run.stdout, "transport cloud-proxy")
        // One numbering: the host's lines name the steps as the decision log below does.
        assert.include(run.stdout, `task ${taskId} step 0: write_file → ok:`)
        assert.include(run.stdout, `task ${taskId} step 1: finish → ok:`)
        assert.include(run.stdout, `task ${taskId}: succeeded after 2 steps: wrote hello.txt`)
        assert.strictEqual(fs.readFileSync(path.join(workdir, "hello.txt"), "utf8"), "hello from the cloud planner\n")

        const task = yield* taskJson(server, taskId)
        assert.strictEqual(task.status, "succeeded")
        assert.strictEqual(task.output, "wrote hello.txt")
        assert.isString(task.terminalAt)

        // The cloud called its provider with the profile's key, the tools and the screenshot.
        const calls = fake.chatRequests()
        assert.strictEqual(calls.length, 2)
        assert.isTrue(calls.every((c) => c.headers.authorization === `Bearer ${profileKey}`))
        const body = calls[0]!.body as any
        assert.strictEqual(body.model, "fake-model")
        assert.deepStrictEqual(body.tools.map((t: any) => t.function.name), ["finish", "fail", "read_file", "write_file"])
        assert.include(JSON.stringify(body.messages), `data:image/png;base64,${png.toString("base64")}`)

        const decisions = ok(yield* admin(server, ["decisions", taskId]), "decisions").stdout
        assert.match(decisions, /attempt 1 step 0 .* write_file \{"path":"hello.txt"/)
        assert.match(decisions, /attempt 1 step 1 .* finish \{"summary":"wrote hello.txt"\}/)
        const logged = ok(yield* admin(server, ["decisions", taskId, "--json"]), "decisions --json").stdout
        const parsed = JSON.parse(logged) as { decisions: Array<{ stepIndex: number; userPrompt: string; systemPrompt: string }> }
        assert.deepStrictEqual(parsed.decisions.map((d) => d.stepIndex), [0, 1])
        assert.include(parsed.decisions[1]!.userPrompt, "0. write_file")
        assert.include(parsed.decisions[1]!.userPrompt, "This is step 1 ")
        assert.notInclude(logged, png.toString("base64"), "screenshot bytes are never persisted")

        const hosts = ok(yield* admin(server, ["hosts", "list"]), "hosts list").stdout
        assert.include(hosts, host["SWITCHBOARD_HOST_ID"]!)
        assert.notInclude(hosts, "last heartbeat -", "the host's heartbeat was recorded")
        assert.notInclude(hosts, host["SWITCHBOARD_HOST_TOKEN"]!)
        const profiles = ok(yield* admin(server, ["profiles", "list"]), "profiles list").stdout
        assert.include(profiles, "* ")
        assert.notInclude(profiles, profileKey)

        // No secret in the host's output or the server's log lines.
        for (const secret of [profileKey, host["SWITCHBOARD_HOST_TOKEN"]!, ADMIN_TOKEN, CREDENTIAL_KEY]) {
          assert.notInclude(run.stdout + run.stderr, secret)
          assert.isFalse(logLines.some((line) => line.includes(secret)), "a secret in a server log line")
        }
      }), spawnTimeout)

    it.effect("admin decisions follows every page of a long decision log (a page ends before 16 MiB of prompts)", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const fake = yield* FakeOpenAi.scoped()
        const cloud = client(server)
        const { host, task } = yield* cloud.readyHost(fake.url, { host: "paged-host" })
        // Five decisions of 4 MiB prompts: two pages (three, then two).
        for (const n of [0, 1, 2, 3, 4]) {
          fake.enqueue(FakeOpenAi.reply.toolCalls([{ name: "click", arguments: JSON.stringify({ x: n, y: n }) }]))
          const decided = yield* cloud.decision(host.token, decisionBody(host, task, { userPrompt: `${n}`.repeat(4 * 1024 * 1024) }))
          assert.strictEqual(decided.status, 200, decided.text)
        }
        const firstPage = yield* cloud.admin.get(`/admin/planner-decisions?taskId=${task.taskId}`)
        assert.isString(firstPage.json.nextAfter, "more than one page")
        const lines = ok(yield* admin(server, ["decisions", task.taskId]), "decisions").stdout.trim().split("\n")
        assert.deepStrictEqual(lines.map((line) => /step (\d+)/.exec(line)?.[1]), ["0", "1", "2", "3", "4"])
        const logged = JSON.parse(ok(yield* admin(server, ["decisions", task.taskId, "--json"]), "decisions --json").stdout) as {
          decisions: Array<{ stepIndex: number }>
        }
        assert.deepStrictEqual(logged.decisions.map((d) => d.stepIndex), [0, 1, 2, 3, 4])
      }), spawnTimeout)

    it.effect("direct: the host calls its own provider; the cloud's decision log stays empty", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const cloudProvider = yield* FakeOpenAi.scoped({ apiKey: profileKey })
        cloudProvider.respondWith((request) => plan(request))
        const { host, taskId } = yield* setUpOverHttp(cloudProvider.url, "direct-host")

        const port = yield* Effect.promise(() => FakeOpenAi.closedPort())
        const own = yield* Effect.acquireRelease(
          Effect.promise(() =>
            new Promise<ReturnType<typeof spawn>>((resolve, reject) => {
              const child = spawn(path.join(root, "node_modules/.bin/node"), [path.join(root, "examples/fake-planner-provider.ts"), String(port)], {
                stdio: ["ignore", "pipe", "inherit"]
              })
              child.on("error", reject)
              child.stdout!.on("data", (chunk: Buffer) => {
                if (chunk.toString("utf8").includes("fake planner provider on")) resolve(child)
              })
            })
          ),
          (child) => Effect.sync(() => child.kill("SIGTERM"))
        )
        assert.isDefined(own.pid)

        const workdir = tempDir("switchboard-e2e-direct-")
        const run = yield* runCli(["host", "run", "--server", server, "--workdir", workdir, "--once", "--transport", "direct"], {
          env: {
            ...noProviderEnv,
            ...host,
            LLM_PROVIDER: "openai-compatible",
            LLM_MODEL: "fake-planner",
            LLM_API_KEY: "sk-host-own-key",
            LLM_BASE_URL: `http://127.0.0.1:${port}/v1`
          }
        })
        assert.strictEqual(run.code, 0, run.stderr + run.stdout)
        assert.include(run.stdout, "transport direct")
        assert.include(run.stdout, `task ${taskId}: succeeded after 2 steps: wrote hello.txt`)
        assert.strictEqual(fs.readFileSync(path.join(workdir, "hello.txt"), "utf8"), "Hello from the planner: Write hello.txt\n")

        assert.strictEqual((yield* taskOverHttp(taskId)).status, "succeeded")
        assert.strictEqual(cloudProvider.chatRequests().length, 0, "the cloud's provider was never called")
        const decisions = yield* client(server).admin.get(`/admin/planner-decisions?taskId=${taskId}`)
        assert.deepStrictEqual(decisions.json, { decisions: [] })
      }), spawnTimeout)

    it.effect("a step longer than the lease: the host renews it, and the result of attempt 1 is accepted", () =>
      Effect.gen(function*() {
        const fake = yield* FakeOpenAi.scoped({ apiKey: profileKey })
        // The first decision alone outlasts the 6 s lease.
        fake.respondWith((request) => plan(request, fake.chatRequests().length === 1 ? 7_500 : undefined))
        const { host, taskId } = yield* setUpOverHttp(fake.url, "slow-host")
        const workdir = tempDir("switchboard-e2e-lease-")
        const run = yield* runCli(["host", "run", "--server", yield* baseUrl, "--workdir", workdir, "--once"], {
          env: { ...noProviderEnv, ...host }
        })
        assert.strictEqual(run.code, 0, run.stderr + run.stdout)
        assert.notInclude(run.stdout, "lease lost")
        const task = yield* taskOverHttp(taskId)
        assert.strictEqual(task.status, "succeeded")
        assert.strictEqual(task.attempt, 1, "never requeued")
      }), spawnTimeout)

    it.effect("SIGTERM during a step: the step finishes, the task is reported failed (host shutting down), exit 0", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const fake = yield* FakeOpenAi.scoped({ apiKey: profileKey })
        // The first decision takes a while: the signal arrives while the step is under way.
        fake.respondWith((request) => plan(request, 1_500))
        const { host, taskId } = yield* setUpOverHttp(fake.url, "sigterm-host")

        const workdir = tempDir("switchboard-e2e-term-")
        const agent = spawnCli(["host", "run", "--server", server, "--workdir", workdir], { env: { ...noProviderEnv, ...host } })
        yield* Effect.promise(() => fake.waitFor((requests) => requests.length >= 1, 20_000))
        agent.child.kill("SIGTERM")
        const end = yield* Effect.promise(() => agent.exited)
        assert.strictEqual(end.code, 0, end.stderr + end.stdout)
        assert.include(end.stdout, `task ${taskId} step 0: write_file → ok:`, "the step under way was finished")
        assert.strictEqual(fs.readFileSync(path.join(workdir, "hello.txt"), "utf8"), "hello from the cloud planner\n")
        assert.strictEqual(fake.chatRequests().length, 1, "no further step was started")
        const task = yield* taskOverHttp(taskId)
        assert.strictEqual(task.status, "failed")
        assert.strictEqual(task.output, "host shutting down")
      }), spawnTimeout)

    it.effect("admin: tasks list by status, profiles activate, prune, rotate-credential-key", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const cloud = client(server)
        const first = yield* cloud.addProfile({ name: "list-a", provider: "anthropic", model: "m", timeoutMs: 1000, apiKey: "sk-a" })
        // Reserved for a host that never runs, so that no other test's agent claims it.
        const idle = yield* cloud.addHost("idle-host")
        const queued = yield* cloud.addTask("stays queued", idle.hostId)
        const listed = ok(yield* admin(server, ["tasks", "list", "--status", "queued"]), "tasks list").stdout
        assert.include(listed, `${queued}  queued  attempt 1  host ${idle.hostId}  stays queued`)
        assert.notInclude(listed, "succeeded")
        const activated = ok(yield* admin(server, ["profiles", "activate", first]), "profiles activate").stdout
        assert.strictEqual(activated.trim(), `active: ${first} (list-a)`)
        const profiles = ok(yield* admin(server, ["profiles", "list", "--json"]), "profiles list").stdout
        const active = (JSON.parse(profiles) as { profiles: Array<{ profileId: string; active: boolean }> }).profiles.filter((p) => p.active)
        assert.deepStrictEqual(active.map((p) => p.profileId), [first])
        assert.match(ok(yield* admin(server, ["prune"]), "prune").stdout, /^deleted \d+ decisions, \d+ hourly usage rows$/m)
        assert.match(
          ok(yield* admin(server, ["rotate-credential-key"]), "rotate").stdout,
          /^re-encrypted 0, already current \d+; agents' MCP headers: re-encrypted 0, already current 0; every credential is now under key \S+$/m
        )
      }), spawnTimeout)

    it.effect("admin usage and hosts budget: a host over its budget fails its task with budget_exceeded", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const fake = yield* FakeOpenAi.scoped({ apiKey: profileKey })
        // Each decision: 40 input and 10 output tokens.
        fake.respondWith((request) => {
          const reply = plan(request)
          if (reply.type !== "json") return reply
          return { ...reply, body: { ...(reply.body as object), usage: { prompt_tokens: 40, completion_tokens: 10, total_tokens: 50 } } }
        })
        const { host, taskId } = yield* setUpOverHttp(fake.url, "budget-host")
        const hostId = host.SWITCHBOARD_HOST_ID
        const workdir = tempDir("switchboard-e2e-budget-")
        ok(yield* runCli(["host", "run", "--server", server, "--workdir", workdir, "--once"], { env: { ...noProviderEnv, ...host } }), "host run")

        const usage = ok(yield* admin(server, ["usage", "--group-by", "task", "--host-id", hostId]), "usage").stdout
        assert.include(usage, "by task")
        assert.include(usage, `${taskId}  2 calls  80 in (0 cached)  20 out`)
        const budget = ok(yield* admin(server, ["hosts", "budget", hostId, "--daily-tokens", "100"]), "hosts budget").stdout
        assert.strictEqual(budget.trim(), `${hostId}  budget 100 tokens a day  used 100 over the last 24 hours`)

        const next = ok(yield* admin(server, ["tasks", "add", "Write hello.txt again", "--host-id", hostId]), "tasks add").stdout.trim()
        const refused = yield* runCli(["host", "run", "--server", server, "--workdir", workdir, "--once"], { env: { ...noProviderEnv, ...host } })
        assert.include(refused.stdout, `task ${next}: failed after 0 steps: planner failed at step 0 after 1 try (budget_exceeded)`)
        assert.strictEqual(fake.chatRequests().length, 2, "no provider call for the refused decision")
        const failed = yield* taskJson(server, next)
        assert.strictEqual(failed.status, "failed")
        assert.include(failed.output, "budget_exceeded")

        const cleared = ok(yield* admin(server, ["hosts", "budget", hostId, "--default"]), "hosts budget --default").stdout
        assert.strictEqual(cleared.trim(), `${hostId}  budget none  used 100 over the last 24 hours`)
      }), spawnTimeout)

    it.effect("admin tasks cancel during a step: the host's next call gets 409 task_cancelled; it stops and reports nothing", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const fake = yield* FakeOpenAi.scoped({ apiKey: profileKey })
        // The first decision takes a while (within the profile's 10 s timeout): the operator cancels
        // while the host waits for it, and its lease renewals or that decision learn of it.
        fake.respondWith((request) => plan(request, fake.chatRequests().length === 1 ? 8_000 : undefined))
        const { host, taskId } = yield* setUpOverHttp(fake.url, "cancelled-host")

        const workdir = tempDir("switchboard-e2e-cancel-")
        const agent = spawnCli(["host", "run", "--server", server, "--workdir", workdir, "--once"], { env: { ...noProviderEnv, ...host } })
        yield* Effect.promise(() => fake.waitFor((requests) => requests.length >= 1, 20_000))
        const cancelled = ok(yield* admin(server, ["tasks", "cancel", taskId]), "tasks cancel").stdout
        assert.strictEqual(cancelled.trim(), `cancelled: ${taskId} (attempt 1)`)
        const end = yield* Effect.promise(() => agent.exited)
        // --once: 1 unless the task succeeded; the agent stopped on its own, without a report.
        assert.strictEqual(end.code, 1, end.stderr + end.stdout)
        assert.include(end.stdout, `task ${taskId} attempt 1: cancelled by the operator, stopped without reporting`)
        assert.isFalse(fs.existsSync(path.join(workdir, "hello.txt")), "the decision answered after the cancel was not carried out")
        assert.strictEqual(fake.chatRequests().length, 1, "no further decision was asked")
        const task = yield* taskOverHttp(taskId)
        assert.strictEqual(task.status, "cancelled")
        assert.isUndefined(task.output, "nothing was reported")
        const again = yield* admin(server, ["tasks", "cancel", taskId])
        assert.strictEqual(again.code, 1)
        assert.include(again.stderr, "task_terminal")
      }), spawnTimeout)

    it.effect("admin: hosts rotate-token and revoke, chats delete", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const cloud = client(server)
        const host = exportsOf(ok(yield* admin(server, ["hosts", "add", "lifecycle-host"]), "hosts add").stdout)
        const hostId = host["SWITCHBOARD_HOST_ID"]!
        const rotated = ok(yield* admin(server, ["hosts", "rotate-token", hostId]), "hosts rotate-token")
        const fresh = exportsOf(rotated.stdout)
        assert.strictEqual(fresh["SWITCHBOARD_HOST_ID"], hostId)
        assert.notStrictEqual(fresh["SWITCHBOARD_HOST_TOKEN"], host["SWITCHBOARD_HOST_TOKEN"])
        assert.include(rotated.stderr, "shown only this once")
        const heartbeat = (token: string) => cloud.hostPost(token, `/internal/hosts/${hostId}/heartbeat`).pipe(Effect.map((r) => r.status))
        assert.strictEqual(yield* heartbeat(host["SWITCHBOARD_HOST_TOKEN"]!), 401, "the old token")
        assert.strictEqual(yield* heartbeat(fresh["SWITCHBOARD_HOST_TOKEN"]!), 200, "the new token")

        const revoked = ok(yield* admin(server, ["hosts", "revoke", hostId]), "hosts revoke").stdout
        assert.match(revoked, new RegExp(`^revoked: ${hostId} \\(lifecycle-host\\) at \\S+$`, "m"))
        assert.strictEqual(yield* heartbeat(fresh["SWITCHBOARD_HOST_TOKEN"]!), 401, "a revoked host's token")
        assert.match(ok(yield* admin(server, ["hosts", "list"]), "hosts list").stdout, new RegExp(`^${hostId}  lifecycle-host  .* revoked \\S+$`, "m"))

        const turn = yield* postJsonAt(server, "/api/agent/chat", { chatId: "cli-doomed", messages: [{ id: "u1", role: "user", content: "hi", timestamp: 1 }] })
        assert.strictEqual(turn.status, 200, turn.text)
        assert.strictEqual(ok(yield* admin(server, ["chats", "delete", "cli-doomed"]), "chats delete").stdout.trim(), "deleted: cli-doomed")
        assert.strictEqual((yield* cloud.admin.get("/api/chats/cli-doomed/messages")).status, 404)
        const again = yield* admin(server, ["chats", "delete", "cli-doomed"])
        assert.strictEqual(again.code, 1)
        assert.include(again.stderr, "chat_not_found")
      }), spawnTimeout)

    it.effect("admin commands: a missing or wrong ADMIN_TOKEN is a clear error, exit 1", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const missing = yield* runCli(["admin", "hosts", "list", "--server", server], { env: { ADMIN_TOKEN: undefined } })
        assert.strictEqual(missing.code, 1)
        assert.include(missing.stderr, "no admin token: pass --token or set ADMIN_TOKEN")
        const wrong = yield* runCli(["admin", "hosts", "list", "--server", server, "--token", "nope"], { env: { ADMIN_TOKEN: undefined } })
        assert.strictEqual(wrong.code, 1)
        assert.include(wrong.stderr, "unauthenticated")
        const badHost = yield* runCli(["host", "run", "--server", server, "--host-id", "nobody", "--token", "wrong", "--once"], {
          env: noProviderEnv
        })
        assert.strictEqual(badHost.code, 1)
        assert.include(badHost.stderr, "heartbeat refused")
      }), spawnTimeout)
  })
})
