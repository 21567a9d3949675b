/**
 * The host agent's tools on a real temporary directory: files confined to the
 * workdir (every way out tried: `..`, absolute paths, symbolic links to a file,
 * to a directory, dangling), `shell` limited to the allow-list, run without a
 * shell, killed at its time limit, its output capped; the screenshot command's
 * PNG; and the JSON Schema form the planner is sent.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { plannerTools } from "../src/HostTool.ts"
import { makeHostRegistry } from "../src/HostRegistry.ts"
import type { HostTools } from "../src/HostRegistry.ts"
import { takeScreenshot } from "../src/Screenshot.ts"
import { tempDir } from "@switchboard/client/testing"

const node = process.execPath

const setup = (allow: ReadonlyArray<string> = [], timeoutMs = 5_000, maxOutputBytes = 4096) =>
  Effect.gen(function*() {
    const base = tempDir("switchboard-host-")
    const workdir = path.join(base, "work")
    const outside = path.join(base, "outside")
    fs.mkdirSync(workdir)
    fs.mkdirSync(outside)
    fs.writeFileSync(path.join(outside, "secret.txt"), "top secret")
    const tools = yield* makeHostRegistry({ workdir, shell: { allow, timeoutMs, maxOutputBytes } })
    return { tools, workdir, outside }
  })

const call = (tools: HostTools, name: string, args: Record<string, unknown>) => {
  const tool = tools.registry.get(name)
  if (tool === undefined) return Effect.die(`no tool ${name}`)
  return tool.execute(args, { agentContext: null }).pipe(
    Effect.map((result) => ({ ok: true as const, result: result as any })),
    Effect.catch((error: any) => Effect.succeed({ ok: false as const, error: String(error.message) }))
  )
}

describe("host tools: files", () => {
  it.effect("write_file then read_file round-trips inside the workdir, creating directories", () =>
    Effect.gen(function*() {
      const { tools, workdir } = yield* setup()
      const written = yield* call(tools, "write_file", { path: "notes/today.txt", content: "hello ✓" })
      assert.isTrue(written.ok)
      assert.strictEqual(fs.readFileSync(path.join(workdir, "notes/today.txt"), "utf8"), "hello ✓")
      const read = yield* call(tools, "read_file", { path: "notes/../notes/today.txt" })
      assert.deepStrictEqual(read, { ok: true, result: { path: "notes/../notes/today.txt", content: "hello ✓" } })
    }))

  it.effect("`..` cannot leave the workdir, for reading or writing", () =>
    Effect.gen(function*() {
      const { outside, tools } = yield* setup()
      const read = yield* call(tools, "read_file", { path: "../outside/secret.txt" })
      assert.isFalse(read.ok)
      assert.include(read.ok ? "" : read.error, "outside the workdir")
      const write = yield* call(tools, "write_file", { path: "a/../../outside/new.txt", content: "x" })
      assert.isFalse(write.ok)
      assert.isFalse(fs.existsSync(path.join(outside, "new.txt")))
    }))

  it.effect("absolute paths are refused, even one inside the workdir", () =>
    Effect.gen(function*() {
      const { outside, tools, workdir } = yield* setup()
      fs.writeFileSync(path.join(workdir, "inside.txt"), "in")
      for (const target of [path.join(outside, "secret.txt"), path.join(workdir, "inside.txt"), "/etc/passwd"]) {
        const read = yield* call(tools, "read_file", { path: target })
        assert.isFalse(read.ok, target)
        assert.include(read.ok ? "" : read.error, "absolute paths are not allowed")
      }
      const write = yield* call(tools, "write_file", { path: path.join(outside, "abs.txt"), content: "x" })
      assert.isFalse(write.ok)
      assert.isFalse(fs.existsSync(path.join(outside, "abs.txt")))
    }))

  it.effect("a symbolic link to a file outside is neither read nor written through", () =>
    Effect.gen(function*() {
      const { outside, tools, workdir } = yield* setup()
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(workdir, "link.txt"))
      const read = yield* call(tools, "read_file", { path: "link.txt" })
      assert.isFalse(read.ok)
      assert.include(read.ok ? "" : read.error, "symbolic link")
      const write = yield* call(tools, "write_file", { path: "link.txt", content: "overwritten" })
      assert.isFalse(write.ok)
      assert.strictEqual(fs.readFileSync(path.join(outside, "secret.txt"), "utf8"), "top secret")
    }))

  it.effect("a symbolic link to a directory outside cannot be written into", () =>
    Effect.gen(function*() {
      const { outside, tools, workdir } = yield* setup()
      fs.symlinkSync(outside, path.join(workdir, "out"))
      const write = yield* call(tools, "write_file", { path: "out/planted.txt", content: "x" })
      assert.isFalse(write.ok)
      const deeper = yield* call(tools, "write_file", { path: "out/new/dir/planted.txt", content: "x" })
      assert.isFalse(deeper.ok)
      assert.deepStrictEqual(fs.readdirSync(outside), ["secret.txt"])
      const read = yield* call(tools, "read_file", { path: "out/secret.txt" })
      assert.isFalse(read.ok)
    }))

  it.effect("a dangling symbolic link (to a file that would be created outside) is refused", () =>
    Effect.gen(function*() {
      const { outside, tools, workdir } = yield* setup()
      fs.symlinkSync(path.join(outside, "created.txt"), path.join(workdir, "dangling.txt"))
      const write = yield* call(tools, "write_file", { path: "dangling.txt", content: "x" })
      assert.isFalse(write.ok)
      assert.include(write.ok ? "" : write.error, "dangling")
      assert.isFalse(fs.existsSync(path.join(outside, "created.txt")))
    }))

  it.effect("a link that stays inside the workdir is followed", () =>
    Effect.gen(function*() {
      const { tools, workdir } = yield* setup()
      fs.mkdirSync(path.join(workdir, "real"))
      fs.writeFileSync(path.join(workdir, "real/file.txt"), "inside")
      fs.symlinkSync(path.join(workdir, "real"), path.join(workdir, "alias"))
      const read = yield* call(tools, "read_file", { path: "alias/file.txt" })
      assert.deepStrictEqual(read, { ok: true, result: { path: "alias/file.txt", content: "inside" } })
    }))

  it.effect("a missing file is an error the planner can read", () =>
    Effect.gen(function*() {
      const { tools } = yield* setup()
      const read = yield* call(tools, "read_file", { path: "nope.txt" })
      assert.isFalse(read.ok)
      assert.include(read.ok ? "" : read.error, "cannot read \"nope.txt\"")
    }))
})

describe("host tools: shell", () => {
  it.effect("is not offered without an allow-list", () =>
    Effect.gen(function*() {
      const { tools } = yield* setup()
      assert.deepStrictEqual(tools.registry.getAll().map((t) => t.name), ["finish", "fail", "read_file", "write_file"])
    }))

  it.effect("runs an allowed command in the workdir, arguments passed as they are (no shell)", () =>
    Effect.gen(function*() {
      const { tools, workdir } = yield* setup([node])
      const run = yield* call(tools, "shell", {
        command: node,
        args: ["-e", "console.log(process.cwd()); console.log(process.argv[1])", "$(touch pwned); echo hi | cat > x"]
      })
      assert.isTrue(run.ok)
      const lines = run.ok ? String(run.result.stdout).trim().split("\n") : []
      assert.strictEqual(lines[0], fs.realpathSync(workdir))
      assert.strictEqual(lines[1], "$(touch pwned); echo hi | cat > x", "shell syntax arrives as a plain argument")
      assert.strictEqual(run.ok ? run.result.exitCode : -1, 0)
      assert.deepStrictEqual(fs.readdirSync(workdir), [], "nothing was interpreted")
    }))

  it.effect("refuses a command not on the list, also the same program by another path", () =>
    Effect.gen(function*() {
      const { tools, workdir } = yield* setup(["ls"])
      for (const command of ["rm", "/bin/ls", "./ls", "ls -la", "sh"]) {
        const run = yield* call(tools, "shell", { command, args: ["-c", `touch ${path.join(workdir, "pwned")}`] })
        assert.isFalse(run.ok, command)
        assert.include(run.ok ? "" : run.error, "is not allowed")
      }
      assert.isFalse(fs.existsSync(path.join(workdir, "pwned")))
    }))

  it.effect("a non-zero exit is an outcome; its environment is not the host's", () =>
    Effect.gen(function*() {
      const { tools } = yield* setup([node])
      process.env["SWITCHBOARD_HOST_TOKEN"] = "host-token-must-not-leak"
      const run = yield* call(tools, "shell", {
        command: node,
        args: ["-e", "process.stderr.write(String(process.env.SWITCHBOARD_HOST_TOKEN)); process.exit(3)"]
      }).pipe(Effect.ensuring(Effect.sync(() => delete process.env["SWITCHBOARD_HOST_TOKEN"])))
      assert.isTrue(run.ok)
      assert.strictEqual(run.ok ? run.result.exitCode : 0, 3)
      assert.strictEqual(run.ok ? run.result.stderr : "", "undefined")
    }))

  it.effect("a command past its time limit is killed and reported", () =>
    Effect.gen(function*() {
      const { tools } = yield* setup([node], 300)
      const run = yield* call(tools, "shell", { command: node, args: ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"] })
      assert.isFalse(run.ok)
      assert.include(run.ok ? "" : run.error, "did not finish within 300 ms and was killed")
    }))

  it.effect("output beyond the cap is cut and marked", () =>
    Effect.gen(function*() {
      const { tools } = yield* setup([node], 5_000, 1000)
      const run = yield* call(tools, "shell", { command: node, args: ["-e", "process.stdout.write('x'.repeat(200000))"] })
      assert.isTrue(run.ok)
      assert.strictEqual(run.ok ? run.result.stdout.length : 0, 1000)
      assert.isTrue(run.ok && run.result.truncated)
    }))

  it.effect("a program that does not exist is an error, not a crash", () =>
    Effect.gen(function*() {
      const { tools } = yield* setup(["no-such-program-xyz"])
      const run = yield* call(tools, "shell", { command: "no-such-program-xyz" })
      assert.isFalse(run.ok)
      assert.include(run.ok ? "" : run.error, "cannot run")
    }))
})

describe("host tools: planner form and screenshot", () => {
  it.effect("tools go to the planner as { name, description, parameters: JSON Schema }", () =>
    Effect.gen(function*() {
      const { tools } = yield* setup(["ls"])
      const sent = plannerTools(tools.registry)
      assert.deepStrictEqual(sent.map((t) => t.name), ["finish", "fail", "read_file", "write_file", "shell"])
      const write = sent.find((t) => t.name === "write_file")
      assert.deepStrictEqual(write?.parameters, {
        type: "object",
        properties: {
          path: { type: "string", description: "File path relative to the working directory." },
          content: { type: "string", description: "The whole new content of the file." }
        },
        required: ["path", "content"],
        additionalProperties: false
      })
      const shell = sent.find((t) => t.name === "shell")
      assert.deepStrictEqual((shell?.parameters as any).properties.args, {
        type: "array",
        items: { type: "string" },
        description: "Its arguments, one string each."
      })
      assert.deepStrictEqual((shell?.parameters as any).properties.command.enum, ["ls"])
    }))

  it.effect("the screenshot is the command's stdout, checked to be a PNG, as base64", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from("fake image body")])
      const script = path.join(dir, "shot.mjs")
      fs.writeFileSync(script, `process.stdout.write(Buffer.from(${JSON.stringify(png.toString("base64"))}, "base64"))`)
      const shot = yield* takeScreenshot(`${node} ${script}`, dir)
      assert.deepStrictEqual(shot, { mediaType: "image/png", data: png.toString("base64") })
      const notPng = path.join(dir, "text.mjs")
      fs.writeFileSync(notPng, "process.stdout.write('hello')")
      const bad = yield* Effect.flip(takeScreenshot(`${node} ${notPng}`, dir))
      assert.include(bad.message, "did not write a PNG")
      const failing = yield* Effect.flip(takeScreenshot(`${node} -e process.exit(2)`, dir))
      assert.include(failing.message, "exited with 2")
    }))
})
