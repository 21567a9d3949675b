/**
 * Tools declared once: the parameter lists and JSON Schemas derived from the
 * domain's argument schemas are the ones that used to be written by hand
 * (pinned below as they were, byte for byte), and the derivation's rules on
 * small schemas of every kind it takes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import {
  DemoTool,
  OfferedValues,
  ResearchTool,
  toolFromSchema,
  toolJsonSchema,
  toolParameters,
  toParametersSchema,
  TranscribeVideo,
  VisualTool
} from "../src/index.ts"
import type { ToolParameter, ToolSchema } from "../src/index.ts"

/** What a provider is sent for a tool: its own JSON Schema, else the one its parameter list makes. */
const wireSchema = (tool: ToolSchema) => tool.inputSchema ?? toParametersSchema(tool.parameters)

const flat = (parameters: ReadonlyArray<ToolParameter>) => ({
  type: "object",
  properties: Object.fromEntries(parameters.map(({ description, key, type }) => [key, { type, description }])),
  required: parameters.filter((p) => p.required).map((p) => p.key),
  additionalProperties: false
})

// The hand-written parameter lists these tools had before they were derived.
const before: ReadonlyArray<readonly [ToolSchema, ReadonlyArray<ToolParameter>]> = [
  [TranscribeVideo, [
    { key: "assetId", type: "string", required: false, description: "Id of the media asset to transcribe." },
    { key: "language", type: "string", required: false, description: "ISO-639-1 code of the spoken language, e.g. \"en\"." }
  ]],
  [ResearchTool, [
    { key: "question", type: "string", required: true, description: "The question to research." },
    { key: "context", type: "string", required: false, description: "What you need the answer for: focuses the brief." }
  ]],
  [DemoTool, [
    { key: "title", type: "string", required: true, description: "The demo's title." },
    { key: "brief", type: "string", required: true, description: "Concept, parameters and interactions, visual style." }
  ]],
  [VisualTool, [
    { key: "brief", type: "string", required: true, description: "What the figure must show, exactly." }
  ]]
]

describe("tools declared once (domain)", () => {
  it("transcribe_video and the job tools: the parameter lists and JSON Schemas they had, and nothing more", () => {
    for (const [tool, parameters] of before) {
      assert.deepStrictEqual(tool.parameters, parameters, tool.name)
      assert.deepStrictEqual(Object.keys(tool), ["name", "description", "parameters"], `${tool.name}: no inputSchema`)
      assert.strictEqual(JSON.stringify(wireSchema(tool)), JSON.stringify(flat(parameters)), tool.name)
    }
    assert.deepStrictEqual(before.map(([tool]) => tool.name), ["transcribe_video", "research", "demo", "visual"])
  })

  it("every kind of field: type, requiredness, description and allowed values", () => {
    const args = Schema.Struct({
      text: Schema.String.annotate({ description: "A text." }),
      count: Schema.optionalKey(Schema.Int.annotate({ description: "How many." })),
      ratio: Schema.Number,
      flag: Schema.optionalKey(Schema.Boolean),
      mode: Schema.Literals(["fast", "slow"]).annotate({ description: "How." }),
      list: Schema.optionalKey(Schema.Array(Schema.String))
    })
    assert.deepStrictEqual(toolParameters(args), [
      { key: "text", type: "string", required: true, description: "A text." },
      { key: "count", type: "integer", required: false, description: "How many." },
      { key: "ratio", type: "number", required: true },
      { key: "flag", type: "boolean", required: false },
      { key: "mode", type: "string", required: true, description: "How.", enum: ["fast", "slow"] },
      { key: "list", type: "array", required: false }
    ])
    assert.deepStrictEqual(toolJsonSchema(args), {
      type: "object",
      properties: {
        text: { type: "string", description: "A text." },
        count: { type: "integer", description: "How many." },
        ratio: { type: "number" },
        flag: { type: "boolean" },
        mode: { type: "string", description: "How.", enum: ["fast", "slow"] },
        list: { type: "array", items: { type: "string" } }
      },
      required: ["text", "ratio", "mode"],
      additionalProperties: false
    })
    // The list's item type is what the parameter list cannot say: the JSON Schema goes along.
    assert.deepStrictEqual(toolFromSchema("t", "d", args).inputSchema, toolJsonSchema(args))
  })

  it("nested structs, offered values, and a decoding default that asks for the key anyway", () => {
    const args = Schema.Struct({
      pick: Schema.String.annotate({ description: "One of them.", [OfferedValues]: ["a", "b"] }),
      items: Schema.Array(Schema.Struct({ name: Schema.optionalKey(Schema.String), id: Schema.String }))
        .annotate({ description: "The items." })
        .pipe(Schema.withDecodingDefaultKey(Effect.succeed([])))
    })
    assert.deepStrictEqual(toolParameters(args), [
      { key: "pick", type: "string", required: true, description: "One of them." },
      { key: "items", type: "array", required: true, description: "The items." }
    ])
    assert.strictEqual(
      JSON.stringify(toolJsonSchema(args)),
      JSON.stringify({
        type: "object",
        properties: {
          pick: { type: "string", description: "One of them.", enum: ["a", "b"] },
          items: {
            type: "array",
            description: "The items.",
            items: { type: "object", properties: { name: { type: "string" }, id: { type: "string" } }, required: ["id"] }
          }
        },
        required: ["pick", "items"],
        additionalProperties: false
      })
    )
    // Decoding takes what the model was offered, and the default covers a model that left the key out.
    assert.deepStrictEqual(Schema.decodeUnknownSync(args)({ pick: "z" }), { pick: "z", items: [] })
  })

  it("a schema the derivation cannot say is refused when the tool is declared", () => {
    assert.throws(() => toolParameters(Schema.Struct({ any: Schema.Unknown })), /cannot be declared as Unknown/)
    assert.throws(() => toolParameters(Schema.Struct({ either: Schema.Union([Schema.String, Schema.Number]) })), /Union/)
    assert.throws(() => toolParameters(Schema.Record(Schema.String, Schema.String)), /Objects/)
  })
})
