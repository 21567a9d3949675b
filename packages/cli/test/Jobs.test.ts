/**
 * `switchboard chat` and `switchboard jobs` with sub-agent jobs, against the
 * real server (in this process, on an ephemeral port, with the `scripted`
 * provider playing `examples/scripted-research.json`) and a sub-agent whose
 * pace the test sets: the CLI, its own process, shows a dispatch card, the
 * live activity, the steer's result and the wake turn's answer, and its
 * history is re-synced from the transcript.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { buildSubagentSteer } from "@switchboard/domain"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ProviderConfig from "@switchboard/providers"
import { baseUrl, eventually, layerTestServer, makeFakeSubagents, request } from "@switchboard/server/testing"
import { describeSteer } from "../src/cli/JobLines.ts"
import { chatStoreName } from "@switchboard/client"
import { tempDir } from "@switchboard/client/testing"
import { runCli } from "./support/RunCli.ts"

const script = path.resolve(import.meta.dirname, "../../../examples/scripted-research.json")
const subagents = makeFakeSubagents()
// Slow enough for a few polls of the CLI (every 300 ms) to see each activity line.
subagents.answerWith((job) =>
  Effect.gen(function*() {
    yield* job.reportActivity("web_search: \"sigma.js v3\"")
    yield* Effect.sleep("1200 millis")
    yield* job.reportActivity("fetch_url: http://127.0.0.1:8888/pages/sigma-v3")
    yield* Effect.sleep("1200 millis")
    return {
      brief: "Sigma.js v3 renders graphs with WebGL.",
      sources: [{ title: "Sigma.js v3: what changed", url: "http://127.0.0.1:8888/pages/sigma-v3" }]
    }
  })
)

const localState = (home: string) =>
  (JSON.parse(fs.readFileSync(path.join(home, `${chatStoreName}.json`), "utf8")) as {
    state: { chatId: string; messages: Array<ChatMessage> }
  }).state

describe("switchboard chat with sub-agent jobs", () => {
  layer(
    layerTestServer(
      ProviderConfig.layer,
      { LLM_PROVIDER: "scripted", LLM_MODEL: "demo", LLM_API_KEY: "unused", LLM_SCRIPT: script },
      { subagents: subagents.layer }
    ),
    { excludeTestServices: true }
  )("scripted research walk-through", (it) => {
    it.effect("a dispatch card, live activity, then the brief with its sources and the wake turn's answer", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const home = tempDir()
        const run = yield* runCli(["chat", "--server", server, "Please research what is new in sigma.js v3"], { home })
        assert.strictEqual(run.code, 0, run.stderr)
        assert.match(run.stderr, /\[research [0-9a-f]{8}\] dispatched/)
        assert.include(run.stderr, "web_search: \"sigma.js v3\"")
        assert.include(run.stderr, "fetch_url: http://127.0.0.1:8888/pages/sigma-v3")
        const out = run.stdout
        const ack = out.indexOf("I have sent a researcher off")
        const result = out.indexOf("── research result")
        const wake = out.indexOf("The researcher is back.")
        assert.isTrue(ack >= 0 && ack < result && result < wake, out)
        assert.include(out, "Sigma.js v3 renders graphs with WebGL.")
        assert.include(out, "Sources:\n  - Sigma.js v3: what changed <http://127.0.0.1:8888/pages/sigma-v3>")

        // The history was re-synced from the transcript: the steer and the wake answer are in it.
        const local = localState(home)
        const persisted = yield* request(`/api/chats/${local.chatId}/messages`)
        assert.deepStrictEqual(local.messages.map((m) => m.id), persisted.json.messages.map((m: ChatMessage) => m.id))

        const jobs = yield* runCli(["jobs", "--server", server], { home })
        assert.strictEqual(jobs.code, 0, jobs.stderr)
        assert.match(jobs.stdout, /^job_[0-9a-f-]+ {2}research {2}done/m)
        const other = yield* runCli(["jobs", "--server", server, "--chat", "no-such-chat"], { home })
        assert.include(other.stdout, "No jobs in chat no-such-chat.")
      }))

    it.effect("--no-wait leaves the job running; the next run shows what arrived meanwhile, then its own answer", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const home = tempDir()
        const first = yield* runCli(["chat", "--server", server, "--no-wait", "Please research what is new in sigma.js v3"], { home })
        assert.strictEqual(first.code, 0, first.stderr)
        assert.include(first.stdout, "I have sent a researcher off")
        assert.notInclude(first.stdout, "── research result")
        const { chatId } = localState(home)
        yield* eventually(
          request(`/api/jobs?chatId=${chatId}`),
          (r) => r.json.jobs.length === 1 && r.json.jobs[0].status === "done",
          "the job done on the server"
        )
        const second = yield* runCli(["chat", "--server", server, "hello again"], { home })
        assert.strictEqual(second.code, 0, second.stderr)
        const result = second.stdout.indexOf("── research result")
        const answer = second.stdout.indexOf("I'm the scripted research demo")
        assert.isTrue(result >= 0 && result < answer, second.stdout)
      }))

    it.effect("interactive: the user types while the job runs; the steer arrives after their turn", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const home = tempDir()
        const run = yield* runCli(["chat", "--server", server], {
          home,
          input: "Please research what is new in sigma.js v3\nhello while it works\n"
        })
        assert.strictEqual(run.code, 0, run.stderr)
        const out = run.stdout
        const ack = out.indexOf("I have sent a researcher off")
        const typed = out.indexOf("I'm the scripted research demo")
        const result = out.indexOf("── research result")
        const wake = out.indexOf("The researcher is back.")
        assert.isTrue(ack >= 0 && ack < typed && typed < result && result < wake, out)
      }))
  })
})

describe("steer results on the terminal", () => {
  it("a demo and a figure are saved to files whose paths are printed; a failure shows the steer's text", () => {
    const dir = tempDir()
    const demo = buildSubagentSteer(
      { id: "job_demo1", kind: "demo", toolCallId: "c1" },
      { title: "Springs", html: "<!doctype html><p>demo</p>", tested: true, notes: "drag the mass" }
    )
    const printedDemo = describeSteer(demo, dir)
    assert.include(printedDemo, `saved to ${path.join(dir, "job_demo1.html")}`)
    assert.strictEqual(fs.readFileSync(path.join(dir, "job_demo1.html"), "utf8"), "<!doctype html><p>demo</p>")
    const visual = buildSubagentSteer({ id: "job_fig1", kind: "visual", toolCallId: "c2" }, { svg: "<svg xmlns=\"http://www.w3.org/2000/svg\"/>" })
    assert.include(describeSteer(visual, dir), `Figure saved to ${path.join(dir, "job_fig1.svg")}`)
    const failed = buildSubagentSteer({ id: "job_r1", kind: "research", toolCallId: "c3" }, { brief: "Research failed: no network", sources: [] })
    assert.include(describeSteer(failed, dir), "Research failed: no network")
    // A job id is the server's word: one that names a path is saved under the artifacts folder all the same.
    const escaping = buildSubagentSteer({ id: "../../escaped", kind: "visual", toolCallId: "c4" }, { svg: "<svg/>" })
    assert.include(describeSteer(escaping, dir), `Figure saved to ${path.join(dir, "______escaped.svg")}`)
    assert.isFalse(fs.existsSync(path.join(dir, "../../escaped.svg")))
  })
})
