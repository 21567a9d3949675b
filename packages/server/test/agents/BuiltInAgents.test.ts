/**
 * The built-in agent is a definition like any other (agents/BuiltInAgents.ts): what is its own —
 * a built prompt, a context decoded by `AgentContext` — comes from its seed, found by agents/, so
 * the same definition stored by an operator (not built in) is an ordinary template agent.
 */
import { assert, describe, it } from "@effect/vitest"
import { BUILT_IN_AGENT, JobKind } from "@switchboard/domain"
import { Effect } from "effect"
import { checkContext } from "../../src/agents/AgentCheck.ts"
import { builtInAgents, builtInOf } from "../../src/agents/BuiltInAgents.ts"
import { mediaEditorDefinition } from "../../src/agents/MediaEditor.ts"
import { systemPromptOf } from "../../src/agents/SystemPrompt.ts"

const project = {
  projectId: "p1",
  activeSceneId: null,
  playbackTimeMs: 65_000,
  mediaAssets: [{ id: "clip", name: "Intro", kind: "video", uri: "https://example.org/intro.mp4", durationMs: 5_000 }],
  extra: "not an AgentContext key"
}

describe("built-in agents", () => {
  it("media-editor is seeded: all job kinds, transcribe_video, built in", () => {
    assert.strictEqual(builtInAgents.get(BUILT_IN_AGENT)?.definition, mediaEditorDefinition)
    assert.deepStrictEqual(mediaEditorDefinition.jobKinds, [...JobKind.literals])
    assert.deepStrictEqual(mediaEditorDefinition.tools.map((t) => t.name), ["transcribe_video"])
    assert.isTrue(mediaEditorDefinition.builtIn)
  })

  it("its prompt is built from the project, the server tools' words between the fixed part and the context", () => {
    const prompt = systemPromptOf(mediaEditorDefinition, project, "Dispatch research with research.")
    assert.include(prompt, "- playback position: 1:05")
    assert.include(prompt, "- clip: \"Intro\" (video, 0:05)")
    assert.isBelow(prompt.indexOf("Dispatch research"), prompt.indexOf("Project context:"))
    assert.notInclude(prompt, "https://example.org", "an asset's address is not the model's business")
    assert.include(systemPromptOf(mediaEditorDefinition, undefined, undefined), "No project context was provided.")
  })

  it("the same definition, not built in, is an ordinary template filled from the context", () => {
    const stored = { ...mediaEditorDefinition, name: "copy", builtIn: false, systemPrompt: "Project {{context.projectId}}." }
    assert.isUndefined(builtInOf(stored))
    assert.strictEqual(systemPromptOf(stored, project, undefined), "Project p1.")
    assert.strictEqual(systemPromptOf(stored, project, "Tools."), "Project p1.\n\nTools.")
  })

  it.effect("its context is decoded as an AgentContext (unknown keys dropped, a bad one a 400 naming the path)", () =>
    Effect.gen(function*() {
      const decoded = yield* checkContext(mediaEditorDefinition, project)
      assert.notProperty(decoded, "extra")
      assert.strictEqual(decoded?.["projectId"], "p1")
      const bad = yield* Effect.flip(checkContext(mediaEditorDefinition, { ...project, playbackTimeMs: "soon" }))
      assert.include(bad.error, "context.playbackTimeMs")
      // Not built in, without a contextSchema: any object, as it came.
      const stored = { ...mediaEditorDefinition, name: "copy", builtIn: false }
      assert.deepStrictEqual(yield* checkContext(stored, project), project)
    }))
})
