import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { checkListenConfig } from "../../src/Server.ts"

describe("listen configuration", () => {
  it.effect("a non-loopback HOST without CHAT_TOKEN is refused; loopback or a token is fine", () =>
    Effect.gen(function*() {
      const refused = yield* checkListenConfig({ host: "0.0.0.0", chatToken: "" }).pipe(Effect.flip)
      assert.include(refused.message, "CHAT_TOKEN")
      for (const host of ["127.0.0.1", "::1", "localhost"]) yield* checkListenConfig({ host, chatToken: "" })
      yield* checkListenConfig({ host: "0.0.0.0", chatToken: "t0k3n" })
      yield* checkListenConfig({ host: "10.1.2.3", chatToken: "t0k3n" })
    }))
})
