import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { minimumNode, tooOldNode } from "../../src/system/NodeVersion.ts"

describe("tooOldNode", () => {
  it("22.19 and later run the server; an older Node is refused, naming itself and the Node to run", () => {
    for (const version of ["22.19.0", "22.23.3", "23.0.0", "26.10.0"]) assert.isUndefined(tooOldNode(version), version)
    for (const version of ["20.20.2", "22.18.9", "18.0.0", "21.99.0"]) {
      const why = tooOldNode(version)
      assert.isDefined(why, version)
      assert.include(why, `Node ${version} is too old`)
      assert.include(why, "node_modules/.bin/node dist/server/src/main.js")
    }
  })

  it("the minimum is package.json's engines.node, and the Node running the tests meets it", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../../../package.json", import.meta.url), "utf8")) as {
      engines: { node: string }
    }
    assert.strictEqual(pkg.engines.node, `>=${minimumNode.major}.${minimumNode.minor}`)
    assert.isUndefined(tooOldNode(process.versions.node))
  })
})
