/**
 * The registry of job kinds (jobs/JobKinds.ts) drives every place that knew
 * the kinds by name: the job tools chat's port offers and executes, the
 * domain's kinds, the settings' model variables — and the kinds the app
 * accepts from the database, which no longer checks them (migration 0007).
 */
import { assert, describe, it, layer } from "@effect/vitest"
import type { JobKind, ToolCall } from "@switchboard/domain"
import { JobKind as JobKindSchema, jobKindSpecs, jobToolSchemas } from "@switchboard/domain"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { ServerTools } from "../../src/chat/ServerTools.ts"
import { jobKinds, kindNames } from "../../src/jobs/JobKinds.ts"
import { JobSignals } from "../../src/jobs/JobSignals.ts"
import { JobsRepo } from "../../src/jobs/JobsRepo.ts"
import * as JobTools from "../../src/jobs/JobTools.ts"
import { SETTINGS } from "../../src/system/Settings.ts"
import { backend, TestDatabase } from "../support/TestDatabase.ts"
import { storedChatKey } from "../../src/users/ChatKey.ts"
import { mediaEditorDefinition } from "../../src/agents/MediaEditor.ts"

/** A valid call of each kind, built from its tool's required parameters. */
const callOf = (kind: JobKind, n: number): ToolCall => ({
  id: `call_${n}`,
  name: kind,
  args: Object.fromEntries(jobKinds[kind].tool.parameters.filter((p) => p.required).map((p) => [p.key, `${p.key} ${n}`]))
})

describe("the registry of job kinds", () => {
  it("is the domain's kinds, each defined under its own name, its model variable a known setting", () => {
    assert.deepStrictEqual([...kindNames], [...JobKindSchema.literals])
    assert.deepStrictEqual(Object.keys(jobKinds), Object.keys(jobKindSpecs))
    for (const [name, definition] of Object.entries(jobKinds)) {
      assert.strictEqual(definition.kind, name)
      assert.strictEqual(definition.tool.name, name)
      assert.include(SETTINGS.map((s) => s.name), definition.modelVariable)
    }
    assert.deepStrictEqual(jobToolSchemas.map((t) => t.name), [...kindNames])
  })

  it("words the job tools' instructions as the system prompt always had them", () => {
    assert.strictEqual(
      JobTools.jobsInstructions(kindNames),
      "The tools research, demo and visual dispatch sub-agents that work in the background: a call returns at once with " +
        "an acknowledgement, so keep going with your turn. Each result arrives later as a message carrying the sub-agent's " +
        "result (not written by the user): use it when it comes."
    )
  })
})

describe(`the job tools and the stored kinds on ${backend} PostgreSQL`, () => {
  const services = JobTools.layerNoDeps.pipe(
    Layer.provideMerge(JobSignals.layer),
    Layer.provideMerge(JobsRepo.layer),
    Layer.provideMerge(TestDatabase)
  )
  layer(services, { excludeTestServices: true })("the port and the repository", (it) => {
    it.effect("the port offers an agent its job kinds, and executes exactly the registered kinds", () =>
      Effect.gen(function*() {
        const tools = yield* ServerTools
        const offered = yield* tools.offeredTo(mediaEditorDefinition)
        assert.deepStrictEqual(offered.schemas.map((t) => t.name), [...kindNames])
        assert.include(offered.instructions, kindNames[0])
        const researcher = { ...mediaEditorDefinition, name: "researcher", builtIn: false, jobKinds: ["research" as const] }
        assert.deepStrictEqual((yield* tools.offeredTo(researcher)).schemas.map((t) => t.name), ["research"])
        assert.notInclude((yield* tools.offeredTo(researcher)).instructions, "demo")
        assert.deepStrictEqual(yield* tools.offeredTo({ ...researcher, jobKinds: [] }), { schemas: [], instructions: undefined })

        const executed = yield* tools.execute({ chatId: storedChatKey("kinds-1"), context: undefined, agent: mediaEditorDefinition, conversation: [] }, kindNames.map(callOf))
        assert.deepStrictEqual(executed.dispatched.map((j) => j.kind), [...kindNames])
        assert.deepStrictEqual(executed.results.map((m) => m.toolResult?.name), [...kindNames])
        for (const result of executed.results) assert.include(result.toolResult?.result as object, { status: "dispatched" })

        // Each kind's own input schema decides: a call without its required arguments is a tool error.
        const bad = yield* tools.execute({ chatId: storedChatKey("kinds-1"), context: undefined, agent: mediaEditorDefinition, conversation: [] }, [{ id: "call_x", name: "demo", args: { title: "t" } }])
        assert.deepStrictEqual(bad.dispatched, [])
        assert.match(String(bad.results[0]?.toolResult?.error), /^invalid arguments for demo: /)
      }))

    it.effect("a job of a kind the registry lacks is refused: never recorded, claimed or listed", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* JobsRepo
        assert.throws(
          () => repo.jobsCreated([{ id: "job_b0", chatId: storedChatKey("kinds-2"), kind: "bogus" as JobKind, toolCallId: "c0", input: { brief: "b" }, context: undefined }]),
          /no job kind "bogus" is registered/
        )

        // The database takes any kind now (a newer replica's): this server leaves it alone.
        yield* sql`INSERT INTO chats (id) VALUES ('kinds-2')`
        yield* sql`
          INSERT INTO jobs (id, chat_id, kind, tool_call_id, input, activity) VALUES
            ('job_b1', 'kinds-2', 'bogus', 'c1', '{}'::jsonb, 'bogus work'),
            ('job_r1', 'kinds-2', 'research', 'c2', '{"question":"q"}'::jsonb, 'researching: "q"')`
        const claimed = yield* repo.claimRun("runner-test", 10, 60_000)
        assert.deepStrictEqual(claimed.map((j) => j.id), ["job_r1"])
        assert.deepStrictEqual((yield* repo.list(storedChatKey("kinds-2"))).jobs.map((j) => j.id), ["job_r1"])

        yield* sql`UPDATE jobs SET phase = 'wake', finished_at = now(), wake_after = now() WHERE id = 'job_b1'`
        assert.deepStrictEqual(yield* repo.claimWake("wake-test", 10, 60_000), [])
        const bogus = yield* sql<{ lease_owner: string | null }>`SELECT lease_owner FROM jobs WHERE id = 'job_b1'`
        assert.isNull(bogus[0]!.lease_owner)
      }))
  })
})
