/**
 * `read_file {path}`: a text file of the workdir, up to `maxReadBytes` (the
 * rest is cut and `truncated` says so: the answer goes into the next prompt).
 */
import type { ToolDefinition } from "@switchboard/domain"
import { Effect, Schema } from "effect"
import * as fs from "node:fs/promises"
import { HostToolError, hostTool } from "../HostTool.ts"
import type { Workdir } from "../Workdir.ts"

export const maxReadBytes = 64 * 1024

const message = (cause: unknown) => cause instanceof Error ? cause.message : String(cause)

const ReadFileArgs = Schema.Struct({
  path: Schema.String.annotate({ description: "File path relative to the working directory." })
})

export const makeReadFileTool = (workdir: Workdir): ToolDefinition => hostTool({
  name: "read_file",
  description: `Read a text file of the working directory (path relative to it). At most ${maxReadBytes} bytes are returned.`,
  args: ReadFileArgs,
  execute: ({ path: requested }) =>
    Effect.gen(function*() {
      const file = yield* workdir.resolve(requested).pipe(Effect.mapError((e) => new HostToolError({ message: e.message })))
      return yield* Effect.tryPromise({
        try: async () => {
          const handle = await fs.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
          try {
            const stat = await handle.stat()
            if (!stat.isFile()) throw new Error("not a regular file")
            const buffer = Buffer.alloc(Math.min(stat.size, maxReadBytes))
            const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
            return {
              path: requested,
              content: buffer.subarray(0, bytesRead).toString("utf8"),
              ...(stat.size > maxReadBytes ? { truncated: true, size: stat.size } : {})
            }
          } finally {
            await handle.close()
          }
        },
        catch: (cause) => new HostToolError({ message: `cannot read ${JSON.stringify(requested)}: ${message(cause)}` })
      })
    })
})
