import { assert, describe, it } from "@effect/vitest"
import { existsSync } from "node:fs"
import { pathToFileURL } from "node:url"
import { BUILT_SERVER_MAIN } from "../../../../scripts/build.ts"
import { siblingModule } from "../../src/process/SiblingModule.ts"

// Each module loaded through `siblingModule`, by its caller's path inside `src/`.
const LOADED = [["http/ApiDocs", "DocsPageRenderer"], ["jobs/subagents/research/PageFetcher", "ReadableWorker"]] as const

describe("siblingModule", () => {
  it("names the sibling with the caller's own extension: .ts from the sources, .js from the build", () => {
    assert.strictEqual(siblingModule("file:///app/packages/server/src/http/ApiDocs.ts", "DocsPageRenderer").href,
      "file:///app/packages/server/src/http/DocsPageRenderer.ts")
    assert.strictEqual(siblingModule("file:///app/dist/server/src/http/ApiDocs.js", "DocsPageRenderer").href,
      "file:///app/dist/server/src/http/DocsPageRenderer.js")
  })

  it("the modules the server loads this way exist beside their callers, in the sources and in the build", () => {
    const built = pathToFileURL(BUILT_SERVER_MAIN).href.replace(/main\.js$/, "")
    for (const [caller, name] of LOADED) {
      assert.isTrue(existsSync(siblingModule(new URL(`../../src/${caller}.ts`, import.meta.url).href, name)), `${name}.ts`)
      // vitest builds dist/ before any test file runs (scripts/vitest-build.ts).
      assert.isTrue(existsSync(siblingModule(`${built}${caller}.js`, name)), `${name}.js`)
    }
  })
})
