import { assert, describe, it } from "@effect/vitest"
import { wantsEventStream } from "../src/UiStream.ts"

describe("wantsEventStream", () => {
  it("is the Accept header naming text/event-stream with a weight above 0", () => {
    for (const accept of ["text/event-stream", "Text/Event-Stream", "application/json, text/event-stream;q=0.5", "text/event-stream; charset=utf-8"]) {
      assert.isTrue(wantsEventStream(accept), accept)
    }
    for (const accept of [undefined, "", "application/json", "*/*", "application/json, text/event-stream;q=0", "text/event-stream; q=0.0"]) {
      assert.isFalse(wantsEventStream(accept), String(accept))
    }
  })
})
