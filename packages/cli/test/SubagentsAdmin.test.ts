/**
 * Sub-agent kinds from the CLI, against the real server (in this process, on
 * an ephemeral port, over a test database, with ADMIN_TOKEN): `admin
 * subagents apply DIR` (one file per kind, JSON and YAML, idempotent,
 * checked before anything is sent), `list` (the built-in kinds first),
 * `delete` (and the server's refusals: a built-in kind, a kind an agent
 * names); and how `switchboard chat` prints a defined kind's result.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { buildSubagentSteer } from "@switchboard/domain"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ADMIN_TOKEN, baseUrl, client, layerPlannerServer, plannerEnv } from "@switchboard/server/testing"
import { tempDir } from "@switchboard/client/testing"
import { describeSteer } from "../src/cli/JobLines.ts"
import { runCli } from "./support/RunCli.ts"

/** Each test runs the CLI several times (a second or two each on a busy machine): more than the default 30 s. */
const spawnTimeout = 180_000

const admin = (server: string, args: ReadonlyArray<string>) =>
  runCli(["admin", ...args, "--server", server], { env: { ADMIN_TOKEN } })

const ok = <A extends { code: number | null; stderr: string; stdout: string }>(run: A, what: string): A => {
  assert.strictEqual(run.code, 0, `${what}: ${run.stderr}${run.stdout}`)
  return run
}

const summarizeYaml = `description: Summarizes a text in a few sentences
input:
  - { key: text, type: string, required: true, description: The text to summarize }
  - { key: sentences, type: integer, required: false }
systemPrompt: |
  Summarize in {{input.sentences}} sentences:
  {{input.text}}
result:
  type: object
  properties: { summary: { type: string } }
  required: [summary]
maxSteps: 4
`

const triage = {
  description: "Sorts a support ticket into a queue",
  input: [{ key: "ticket", type: "string", required: true }],
  systemPrompt: "Sort this ticket: {{input.ticket}}",
  tools: ["fetch_url"],
  mcpServers: [{ name: "crm", url: "https://crm.example/mcp", tools: ["lookup"] }],
  result: { type: "object", properties: { queue: { type: "string" } }, required: ["queue"] },
  model: "small-model",
  timeoutMs: 60_000
}

/** A directory of two kinds (YAML and JSON) and a README that is not read. */
const kindsDir = () => {
  const dir = tempDir()
  fs.writeFileSync(path.join(dir, "summarize.yaml"), summarizeYaml)
  fs.writeFileSync(path.join(dir, "triage.json"), JSON.stringify(triage, null, 2))
  fs.writeFileSync(path.join(dir, "README.md"), "# not a kind\n")
  return dir
}

interface Listed {
  readonly kind: string
  readonly builtIn: boolean
  readonly description: string
  readonly maxSteps: number
  readonly model?: string
  readonly mcpServers?: ReadonlyArray<{ readonly name: string }>
}

/** The server's kinds, asked over plain HTTP (not through the CLI under test). */
const serverKinds = Effect.gen(function*() {
  const res = yield* client(yield* baseUrl).admin.get("/admin/subagents")
  assert.strictEqual(res.status, 200, res.text)
  return (res.json as { subagents: ReadonlyArray<Listed> }).subagents
})

describe("switchboard admin subagents", () => {
  layer(layerPlannerServer(plannerEnv()), { excludeTestServices: true })("against the server", (it) => {
    it.effect("apply a directory (idempotent), list, delete; the server's refusals are printed", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const dir = kindsDir()

        const first = ok(yield* admin(server, ["subagents", "apply", dir]), "apply")
        assert.deepStrictEqual(first.stdout.trim().split("\n"), ["created   summarize", "created   triage"])
        const stored = yield* serverKinds
        const summarize = stored.find((k) => k.kind === "summarize")
        assert.strictEqual(summarize?.description, "Summarizes a text in a few sentences")
        assert.strictEqual(summarize?.maxSteps, 4)
        assert.strictEqual(stored.find((k) => k.kind === "triage")?.model, "small-model")
        assert.isUndefined(stored.find((k) => k.kind === "readme"), "a README is not a kind")

        // Applying again writes nothing: the server's definitions are what the files say.
        const second = ok(yield* admin(server, ["subagents", "apply", dir, "--json"]), "apply again")
        assert.deepStrictEqual(JSON.parse(second.stdout), {
          subagents: [{ kind: "summarize", action: "unchanged" }, { kind: "triage", action: "unchanged" }]
        })
        fs.writeFileSync(path.join(dir, "summarize.yaml"), summarizeYaml.replace("maxSteps: 4", "maxSteps: 6"))
        const third = ok(yield* admin(server, ["subagents", "apply", dir]), "apply an edit")
        assert.deepStrictEqual(third.stdout.trim().split("\n"), ["updated   summarize", "unchanged triage"])
        assert.strictEqual((yield* serverKinds).find((k) => k.kind === "summarize")?.maxSteps, 6)

        const list = ok(yield* admin(server, ["subagents", "list"]), "list").stdout.trim().split("\n")
        assert.deepStrictEqual(list.map((line) => line.split(" ")[0]), ["research", "demo", "visual", "summarize", "triage"])
        assert.match(list[0]!, /^research \(built in\)  input \S+  tools web_search,fetch_url  mcp -  steps 12  model -  timeout -  \S/)
        assert.strictEqual(
          list[3],
          "summarize  input text,sentences?  tools -  mcp -  steps 6  model -  timeout -  Summarizes a text in a few sentences"
        )
        assert.strictEqual(
          list[4],
          "triage  input ticket  tools fetch_url  mcp crm  steps 12  model small-model  timeout 60000 ms  Sorts a support ticket into a queue"
        )
        const json = JSON.parse(ok(yield* admin(server, ["subagents", "list", "--json"]), "list --json").stdout) as {
          subagents: ReadonlyArray<{ kind: string; systemPrompt: string }>
        }
        assert.strictEqual(json.subagents.find((k) => k.kind === "triage")?.systemPrompt, triage.systemPrompt)

        const deleted = ok(yield* admin(server, ["subagents", "delete", "triage"]), "delete")
        assert.strictEqual(deleted.stdout.trim(), "deleted: triage")
        assert.deepStrictEqual((yield* serverKinds).map((k) => k.kind), ["research", "demo", "visual", "summarize"])
        const again = yield* admin(server, ["subagents", "delete", "triage"])
        assert.strictEqual(again.code, 1)
        assert.include(again.stderr, "subagent_not_found")

        const builtIn = yield* admin(server, ["subagents", "delete", "research"])
        assert.strictEqual(builtIn.code, 1)
        assert.match(builtIn.stderr, /^switchboard: "research" is a built-in sub-agent kind: it cannot be replaced or deleted \(subagent_builtin\)$/m)
        assert.include((yield* serverKinds).map((k) => k.kind), "research")

        // An agent that names the kind keeps it: the refusal names the agent.
        const agents = path.join(tempDir(), "agents.yaml")
        fs.writeFileSync(agents, "- name: summarizer\n  systemPrompt: Summarize what the user pastes.\n  jobKinds: [summarize]\n")
        ok(yield* admin(server, ["agents", "apply", agents]), "agents apply")
        const inUse = yield* admin(server, ["subagents", "delete", "summarize"])
        assert.strictEqual(inUse.code, 1)
        assert.match(inUse.stderr, /^switchboard: .*"summarize" is named by the agent summarizer\b.*\(subagent_in_use\)$/m)
        assert.include((yield* serverKinds).map((k) => k.kind), "summarize")
      }), spawnTimeout)

    it.effect("a directory is checked whole before anything is written; a built-in kind's file is refused", () =>
      Effect.gen(function*() {
        const server = yield* baseUrl
        const before = (yield* serverKinds).map((k) => k.kind)
        const cases: ReadonlyArray<readonly [string, string, RegExp]> = [
          ["typo.yaml", summarizeYaml.replace("maxSteps", "maxsteps"), /typo\.yaml: .*maxsteps/s],
          ["noresult.json", JSON.stringify({ ...triage, result: undefined }), /noresult\.json: Missing key\s+at result/],
          ["Bad_Name.yaml", summarizeYaml, /"Bad_Name" must be 1 to 32 of a-z, 0-9 and -/],
          ["notyaml.yml", "input: [\n", /notyaml\.yml: not YAML/]
        ]
        for (const [name, text, expected] of cases) {
          const dir = kindsDir()
          fs.writeFileSync(path.join(dir, name), text)
          const run = yield* admin(server, ["subagents", "apply", dir])
          assert.strictEqual(run.code, 1, `${name}: ${run.stdout}`)
          assert.include(run.stderr, `Invalid sub-agent file ${path.join(dir, name)}`)
          assert.match(run.stderr, expected, run.stderr)
          assert.strictEqual(run.stdout, "")
        }
        const twice = kindsDir()
        fs.writeFileSync(path.join(twice, "triage.yaml"), summarizeYaml)
        const duplicate = yield* admin(server, ["subagents", "apply", twice])
        assert.strictEqual(duplicate.code, 1)
        assert.include(duplicate.stderr, `kind "triage" is defined twice (also by ${path.join(twice, "triage.json")})`)
        const empty = yield* admin(server, ["subagents", "apply", tempDir()])
        assert.strictEqual(empty.code, 1)
        assert.include(empty.stderr, "No sub-agent files in")
        assert.deepStrictEqual((yield* serverKinds).map((k) => k.kind), before, "nothing was written")

        const builtIn = kindsDir()
        fs.writeFileSync(path.join(builtIn, "research.yaml"), summarizeYaml)
        const refused = yield* admin(server, ["subagents", "apply", builtIn])
        assert.strictEqual(refused.code, 1)
        assert.include(refused.stderr, `sub-agent kind "research" is built in: it cannot be replaced`)
        assert.strictEqual(refused.stdout, "", "nothing of the directory was written")
      }), spawnTimeout)
  })
})

describe("a defined kind's result on the terminal", () => {
  it("its object as readable text; its failure as the reason; built-in kinds as before", () => {
    const dir = tempDir()
    const done = buildSubagentSteer(
      { id: "job_abcdef123", kind: "triage", toolCallId: "c1" },
      { queue: "billing", confidence: 0.9, tags: ["refund", "urgent"], customer: { id: "c42", vip: true } }
    )
    assert.strictEqual(
      describeSteer(done, dir),
      [
        "── triage result [triage abcdef12] ──",
        "queue: billing",
        "confidence: 0.9",
        "tags:",
        "  - refund",
        "  - urgent",
        "customer:",
        "  id: c42",
        "  vip: true"
      ].join("\n")
    )
    const failed = buildSubagentSteer({ id: "job_f1", kind: "triage", toolCallId: "c2" }, { error: "no CRM access" })
    assert.strictEqual(describeSteer(failed, dir), "── triage result [triage f1] ──\nfailed: no CRM access")
    // A result that has an `error` key among others is the sub-agent's own: printed, not a failure.
    const own = buildSubagentSteer({ id: "job_o1", kind: "lint", toolCallId: "c3" }, { error: "E101", line: 3 })
    assert.strictEqual(describeSteer(own, dir), "── lint result [lint o1] ──\nerror: E101\nline: 3")

    const research = buildSubagentSteer(
      { id: "job_r1", kind: "research", toolCallId: "c4" },
      { brief: "Sigma.js v3 renders with WebGL.", sources: [{ title: "", url: "https://example.com" }] }
    )
    assert.strictEqual(
      describeSteer(research, dir),
      "── research result [research r1] ──\nSigma.js v3 renders with WebGL.\nSources:\n  - https://example.com"
    )
    const researchFailed = buildSubagentSteer({ id: "job_r2", kind: "research", toolCallId: "c5" }, { brief: "Research failed: offline", sources: [] })
    assert.strictEqual(describeSteer(researchFailed, dir), `── research result [research r2] ──\n${researchFailed.content}`)
  })
})
