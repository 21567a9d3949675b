/**
 * The host agent's tools, assembled in one place: `finish`, `fail`,
 * `read_file`, `write_file`, and `shell` when the `--allow` list names at
 * least one command (with none, offering it would only invite refused calls).
 * Adding a tool is adding its module under `tools/` and one line here.
 */
import { Effect } from "effect"
import { ToolRegistry } from "@switchboard/client"
import { failTool } from "./tools/Fail.ts"
import { finishTool } from "./tools/Finish.ts"
import { makeReadFileTool } from "./tools/ReadFile.ts"
import { makeShellTool } from "./tools/Shell.ts"
import type { ShellOptions } from "./tools/Shell.ts"
import { makeWriteFileTool } from "./tools/WriteFile.ts"
import { makeWorkdir } from "./Workdir.ts"
import type { Workdir, WorkdirEscape } from "./Workdir.ts"

export interface HostToolOptions {
  readonly workdir: string
  readonly shell: ShellOptions
}

export interface HostTools {
  readonly registry: ToolRegistry
  readonly workdir: Workdir
}

export const makeHostRegistry = (options: HostToolOptions): Effect.Effect<HostTools, WorkdirEscape> =>
  Effect.map(makeWorkdir(options.workdir), (workdir) => {
    const registry = new ToolRegistry()
      .register(finishTool)
      .register(failTool)
      .register(makeReadFileTool(workdir))
      .register(makeWriteFileTool(workdir))
    if (options.shell.allow.length > 0) registry.register(makeShellTool(workdir, options.shell))
    return { registry, workdir }
  })
