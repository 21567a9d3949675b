import { clientToolSchemas, TranscribeVideo } from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeDefaultRegistry } from "../src/tools/DefaultRegistry.ts"
import { makeTranscribeVideo } from "../src/tools/TranscribeVideo.ts"
import { ToolRegistry } from "../src/tools/ToolRegistry.ts"
import { fakeTool, recordingTranscriber } from "./support/Fakes.ts"

describe("ToolRegistry", () => {
  it.effect("Schema export produces internal format", () =>
    Effect.sync(() => {
      const registry = new ToolRegistry().register(makeTranscribeVideo(recordingTranscriber().transcriber))
      const schemas = registry.toToolSchemas()
      assert.strictEqual(schemas.length, 1)
      const [schema] = schemas
      assert.strictEqual(schema?.name, "transcribe_video")
      assert.isString(schema?.description)
      assert.isTrue((schema?.description.length ?? 0) > 0)
      assert.deepStrictEqual(Object.keys(schema ?? {}).sort(), ["description", "name", "parameters"])
      assert.deepStrictEqual(schema?.parameters[0], {
        key: "assetId",
        type: "string",
        required: false,
        description: "Id of the media asset to transcribe."
      })
      assert.deepStrictEqual(schema, TranscribeVideo)
      assert.notProperty(schema, "execute")
    }))

  it.effect("the default registry holds exactly transcribe_video, with the domain's schemas", () =>
    Effect.sync(() => {
      const registry = makeDefaultRegistry(recordingTranscriber().transcriber)
      assert.deepStrictEqual(registry.getAll().map((t) => t.name), ["transcribe_video"])
      assert.isTrue(registry.has("transcribe_video"))
      assert.isFalse(registry.has("echo_context"))
      assert.deepStrictEqual(registry.toToolSchemas(), clientToolSchemas)
    }))

  it.effect("register, get, has, getAll; a name registers once", () =>
    Effect.sync(() => {
      const a = fakeTool("a", [])
      const b = fakeTool("b", [{ key: "n", type: "number", required: true }])
      const registry = new ToolRegistry().register(a.tool).register(b.tool)
      assert.strictEqual(registry.get("a"), a.tool)
      assert.isUndefined(registry.get("c"))
      assert.isTrue(registry.has("b"))
      assert.deepStrictEqual(registry.getAll().map((t) => t.name), ["a", "b"])
      assert.deepStrictEqual(registry.toToolSchemas()[1], {
        name: "b",
        description: "fake b",
        parameters: [{ key: "n", type: "number", required: true }]
      })
      assert.throws(() => registry.register(fakeTool("a", []).tool), /already registered/)
    }))
})
