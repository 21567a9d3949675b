import { assert, describe, it } from "@effect/vitest"
import type { ChatMessage } from "@switchboard/domain"
import { makeAnswerPrinter } from "../src/cli/AnswerPrinter.ts"

const message = (id: string, content: string): ChatMessage => ({ id, role: "assistant", content, timestamp: 1 })

describe("answer printer", () => {
  it("writes deltas as they come, a line per message, and only what did not stream at the end", () => {
    let out = ""
    const printer = makeAnswerPrinter((text) => (out += text))
    printer.delta("Let me ", "m1")
    printer.delta("check.", "m1")
    printer.endLine() // a status line comes
    printer.endLine() // twice changes nothing
    printer.delta("Found", "m2")
    printer.finish(message("m2", "Found it."))
    assert.strictEqual(out, "Let me check.\nFound it.\n")
  })

  it("a message that did not stream is written whole; a round's open line is ended first", () => {
    let out = ""
    const printer = makeAnswerPrinter((text) => (out += text))
    printer.delta("round 8", "m8")
    printer.finish(message("limit", "Reached maximum iteration limit"))
    printer.finish(message("m9", "whole"))
    assert.strictEqual(out, "round 8\nReached maximum iteration limit\nwhole\n")
  })
})
