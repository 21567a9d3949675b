/**
 * `write_file {path, content}`: creates or replaces a file of the workdir,
 * creating missing directories. The final open refuses to follow a link
 * (O_NOFOLLOW), so a link swapped in after the check is not written through.
 */
import type { ToolDefinition } from "@switchboard/domain"
import { Effect, Schema } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { HostToolError, hostTool } from "../HostTool.ts"
import type { Workdir } from "../Workdir.ts"

const message = (cause: unknown) => cause instanceof Error ? cause.message : String(cause)

const WriteFileArgs = Schema.Struct({
  path: Schema.String.annotate({ description: "File path relative to the working directory." }),
  content: Schema.String.annotate({ description: "The whole new content of the file." })
})

export const makeWriteFileTool = (workdir: Workdir): ToolDefinition => hostTool({
  name: "write_file",
  description: "Create or replace a text file of the working directory (path relative to it; missing directories are created).",
  args: WriteFileArgs,
  execute: ({ content, path: requested }) =>
    Effect.gen(function*() {
      const file = yield* workdir.resolve(requested).pipe(Effect.mapError((e) => new HostToolError({ message: e.message })))
      if (file === workdir.root) return yield* new HostToolError({ message: `cannot write ${JSON.stringify(requested)}: it is the working directory` })
      yield* Effect.tryPromise({
        try: async () => {
          await fs.mkdir(path.dirname(file), { recursive: true })
          const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW
          const handle = await fs.open(file, flags, 0o644)
          try {
            await handle.writeFile(content, "utf8")
          } finally {
            await handle.close()
          }
        },
        catch: (cause) => new HostToolError({ message: `cannot write ${JSON.stringify(requested)}: ${message(cause)}` })
      })
      return { path: requested, bytes: Buffer.byteLength(content, "utf8") }
    })
})
