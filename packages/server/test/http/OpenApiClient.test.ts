/**
 * A client generated from the served `/openapi.json`: types by
 * openapi-typescript, calls by openapi-fetch, in the tool workspace
 * tools/openapi-client, which has its own TypeScript 5.9 (openapi-typescript
 * crashes on the repository's TypeScript 7). The client sends free-form
 * `args`/`metadata` and names each error code of the chat route in an
 * exhaustive switch: it must type-check, then run against this server.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { baseUrl, layerTestServer, request } from "../support/TestServer.ts"

const TOOL = fileURLToPath(new URL("../../../../tools/openapi-client/", import.meta.url))
const resolveInTool = createRequire(join(TOOL, "package.json")).resolve
const OPENAPI_TYPESCRIPT = join(dirname(resolveInTool("openapi-typescript/package.json")), "bin", "cli.js")
const TSC = join(dirname(resolveInTool("typescript/package.json")), "bin", "tsc")

// Asynchronous on purpose: the server under test answers from this same process.
const run = (args: Array<string>) =>
  Effect.promise(() =>
    promisify(execFile)(process.execPath, args, { cwd: TOOL, timeout: 120_000, encoding: "utf8" }).then(
      ({ stdout, stderr }) => ({ ok: true, stdout, stderr }),
      (error: { stdout?: string; stderr?: string; message: string }) => ({
        ok: false,
        stdout: error.stdout ?? "",
        stderr: `${error.stderr ?? ""}${error.message}`
      })
    )
  )

describe("client generated from /openapi.json", () => {
  layer(layerTestServer(makeFakeProvider().layer), { excludeTestServices: true })("openapi-typescript + openapi-fetch", (it) => {
    it.effect("type-checks with TypeScript 5.9 and gets every answer as typed", () =>
      Effect.gen(function*() {
        const version = yield* run([TSC, "--version"])
        assert.include(version.stdout, "Version 5.9", "the tool's own TypeScript, not the repository's 7")

        const doc = yield* request("/openapi.json")
        mkdirSync(join(TOOL, "generated"), { recursive: true })
        writeFileSync(join(TOOL, "generated", "openapi.json"), doc.text)
        const generated = yield* run([OPENAPI_TYPESCRIPT, "generated/openapi.json", "-o", "generated/switchboard.ts"])
        assert.isTrue(generated.ok, generated.stderr)

        const checked = yield* run([TSC, "-p", "tsconfig.json"])
        assert.isTrue(checked.ok, `${checked.stdout}\n${checked.stderr}`)

        const exercised = yield* run(["client.ts", yield* baseUrl])
        assert.isTrue(exercised.ok, exercised.stderr)
        const seen = JSON.parse(exercised.stdout)
        assert.strictEqual(seen.ok.status, 200)
        assert.strictEqual(seen.ok.content, "ok")
        assert.isString(seen.ok.messageId)
        assert.strictEqual(seen.invalid.status, 400)
        assert.match(seen.invalid.described, /^fix the request: Invalid request body: .*chatId/)
        assert.deepStrictEqual(seen.unsupported, { status: 415, code: "unsupported_media_type" })
        assert.deepStrictEqual(seen.missing, { status: 404, code: "chat_not_found" })
        assert.deepStrictEqual(seen.transcript, [
          {
            id: "u1",
            metadata: { source: "generated-client", nested: { list: [1, "two", null, { three: true }] } },
            toolCalls: [{ id: "call_1", name: "transcribe_video", args: { clipId: "c1", range: [0, 5] } }]
          },
          { id: seen.ok.messageId }
        ])
      }), { timeout: 120_000 }) // three child processes, a TypeScript check among them: slow on a loaded CI machine
  })
})
