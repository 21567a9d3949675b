/**
 * The host agent's tools, declared once by their argument schemas: the
 * parameter lists the loop validates against and the JSON Schemas the planner
 * is sent are the ones that used to be written by hand, pinned below as they
 * were. And a call's arguments are decoded with the same schema.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { plannerTools } from "../src/HostTool.ts"
import { makeHostRegistry } from "../src/HostRegistry.ts"
import { tempDir } from "@switchboard/client/testing"

const parameter = (key: string, description: string) => ({ key, type: "string" as const, required: true, description })

describe("host tools declared once", () => {
  it.effect("each has the parameters and the planner JSON Schema it had", () =>
    Effect.gen(function*() {
      const { registry } = yield* makeHostRegistry({
        workdir: tempDir("switchboard-host-"),
        shell: { allow: ["ls", "git"], timeoutMs: 1000, maxOutputBytes: 100 }
      })
      // What each flat tool was, as written by hand: its parameters, and the planner's JSON Schema made from them.
      const summary = "What was done, in one or two sentences."
      const reason = "Why the goal cannot be reached."
      const path = "File path relative to the working directory."
      const content = "The whole new content of the file."
      const flatTools = {
        finish: [[parameter("summary", summary)], { summary: { type: "string", description: summary } }],
        fail: [[parameter("reason", reason)], { reason: { type: "string", description: reason } }],
        read_file: [[parameter("path", path)], { path: { type: "string", description: path } }],
        write_file: [
          [parameter("path", path), parameter("content", content)],
          { path: { type: "string", description: path }, content: { type: "string", description: content } }
        ]
      } as const
      const sent = new Map(plannerTools(registry).map((tool) => [tool.name, tool.parameters]))
      assert.deepStrictEqual([...sent.keys()], ["finish", "fail", "read_file", "write_file", "shell"])
      for (const [name, [parameters, properties]] of Object.entries(flatTools)) {
        const tool = registry.get(name)!
        assert.deepStrictEqual(tool.parameters, parameters, name)
        assert.isUndefined(tool.inputSchema, name)
        assert.strictEqual(
          JSON.stringify(sent.get(name)),
          JSON.stringify({ type: "object", properties, required: Object.keys(properties), additionalProperties: false }),
          name
        )
      }

      const shell = registry.get("shell")!
      // The allow-list is offered to the planner, not put in the parameter list: the tool refuses in its own words.
      assert.deepStrictEqual(shell.parameters, [
        parameter("command", "The program, exactly as on the allowed list."),
        { key: "args", type: "array" as const, required: false, description: "Its arguments, one string each." }
      ])
      // As it was, but for the order of two keys of `args` (`description` now comes before `items`, as in every derived schema).
      assert.deepStrictEqual(sent.get("shell"), {
        type: "object",
        properties: {
          command: { type: "string", description: "The program, exactly as on the allowed list.", enum: ["ls", "git"] },
          args: { type: "array", items: { type: "string" }, description: "Its arguments, one string each." }
        },
        required: ["command"],
        additionalProperties: false
      })
      const args = (sent.get("shell") as { properties: { args: object } }).properties.args
      assert.deepStrictEqual(Object.keys(args), ["type", "description", "items"])
    }))

  it.effect("a call's arguments are decoded with the declaring schema; a mismatch is the tool's error", () =>
    Effect.gen(function*() {
      const { registry } = yield* makeHostRegistry({
        workdir: tempDir("switchboard-host-"),
        shell: { allow: ["ls"], timeoutMs: 1000, maxOutputBytes: 100 }
      })
      const finish = yield* registry.get("finish")!.execute({ summary: "done" }, { agentContext: null })
      assert.deepStrictEqual(finish, { summary: "done" })
      const wrong = yield* Effect.flip(registry.get("write_file")!.execute({ path: "a.txt", content: 7 }, { agentContext: null }))
      assert.include(String((wrong as { message: string }).message), "invalid arguments")
      assert.include(String((wrong as { message: string }).message), "content")
      const args = yield* Effect.flip(registry.get("shell")!.execute({ command: "ls", args: ["-l", 3] }, { agentContext: null }))
      assert.include(String((args as { message: string }).message), "invalid arguments")
    }))
})
