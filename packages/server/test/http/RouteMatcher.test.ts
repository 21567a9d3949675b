/**
 * The route table the JSON error layer consults where the router found no
 * route: the methods of each path, as matching every route by hand would
 * give them, for static, parameterised and unknown paths.
 */
import { assert, describe, it } from "@effect/vitest"
import { Api } from "@switchboard/domain"
import { DOCS_ROUTES } from "../../src/http/ApiDocs.ts"
import { routeTable } from "../../src/http/RouteTable.ts"

const table = routeTable(Api, DOCS_ROUTES)

/** A route's path matches when each segment is the same or a parameter (`:name`, any non-empty segment). */
const matches = (route: string, path: string) => {
  const want = route.split("/")
  const got = path.replace(/(.)\/$/, "$1").split("/")
  return want.length === got.length && want.every((segment, i) => segment.startsWith(":") ? got[i] !== "" : segment === got[i])
}

const ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

const direct = (path: string) => {
  const methods = new Set(table.routes.filter((r) => matches(r.path, path)).map((r) => r.method))
  if (methods.has("GET")) methods.add("HEAD")
  return ORDER.filter((m) => methods.has(m))
}

describe("route table", () => {
  it("answers as matching every route would, for static, parameterised and unknown paths", () => {
    const paths = ["/api/agent/chat", "/healthz", "/docs", "/nope", "/api/chats/a/messages", "/api/media/transcriptions"]
    for (let i = 0; i < 30; i++) paths.push(`/api/chats/chat-${i}/messages`, `/internal/tasks/t${i}/lease`)
    for (const round of [1, 2]) {
      for (const path of paths) {
        assert.deepStrictEqual(table.methodsOf(path), direct(path), `${path} (round ${round})`)
      }
    }
    assert.isAbove(direct("/api/chats/x/messages").length, 0)
    assert.strictEqual(direct("/nope").length, 0)
  })

  it("every operation of the API is in it, and the docs beside them", () => {
    assert.deepStrictEqual(table.methodsOf("/api/agent/chat"), ["POST"])
    assert.deepStrictEqual(table.methodsOf("/api/chats/c1/messages?after=2"), ["GET", "HEAD"])
    assert.deepStrictEqual(table.methodsOf("/openapi.json"), ["GET", "HEAD"])
    assert.deepStrictEqual(table.methodsOf(`/api/chats/${"x".repeat(2000)}/messages`), ["GET", "HEAD"], "no limit on a parameter's length")
    const operations = Object.values(Api.groups).flatMap((group) => Object.values(group.endpoints))
    assert.strictEqual(table.routes.length, operations.length + DOCS_ROUTES.length)
  })
})
