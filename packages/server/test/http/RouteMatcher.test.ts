/**
 * The JSON error layer's per-path memory of matching routes: the same answer
 * as matching every pattern, however many distinct paths it has seen.
 */
import { assert, describe, it } from "@effect/vitest"
import { Api } from "@switchboard/domain"
import { DOCS_ROUTES } from "../../src/http/ApiDocs.ts"
import { routeMatcher, routesOf } from "../../src/http/JsonErrors.ts"

const routes = routesOf(Api, DOCS_ROUTES)
const direct = (path: string) => routes.filter((r) => r.pattern.test(path)).map((r) => `${r.method} ${r.pattern}`)

describe("routeMatcher", () => {
  it("answers as matching every route would, for static, parameterised and unknown paths, past its bound", () => {
    const matcher = routeMatcher(routes, 8)
    const paths = ["/api/agent/chat", "/healthz", "/docs", "/nope", "/api/chats/a/messages", "/api/media/transcriptions"]
    for (let i = 0; i < 30; i++) paths.push(`/api/chats/chat-${i}/messages`, `/internal/tasks/t${i}/lease`)
    for (const round of [1, 2]) {
      for (const path of paths) {
        assert.deepStrictEqual(matcher(path).map((r) => `${r.method} ${r.pattern}`), direct(path), `${path} (round ${round})`)
      }
    }
    assert.isAbove(direct("/api/chats/x/messages").length, 0)
    assert.strictEqual(direct("/nope").length, 0)
  })
})
