/**
 * `switchboard chat [message]`: the orchestrator against a server.
 *
 * With a message, runs one turn and prints the answer on stdout; without,
 * reads stdin and runs one turn per non-empty line. History and context live
 * in the state directory (`$SWITCHBOARD_HOME`, default `~/.switchboard`), so a
 * conversation continues across runs until `--new`. Status goes to stderr.
 * Exit code 1 when a turn failed (API or network error) or the input is bad.
 */
import { AgentContext } from "@switchboard/domain"
import { Config, Console, Effect, FileSystem, Layer, Option, Schema, Stdio, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { ChatTransport } from "../agent/ChatTransport.ts"
import { makeOrchestrator } from "../agent/Orchestrator.ts"
import { MediaTranscriber } from "../api/MediaTranscriber.ts"
import { makeAgentStore } from "../stores/AgentStore.ts"
import { makeChatStore } from "../stores/ChatStore.ts"
import { fileStorage, stateDirectory } from "../stores/StateStorage.ts"
import { makeDefaultRegistry } from "../tools/DefaultRegistry.ts"
import { CliFailure, failWith } from "./CliFailure.ts"
import { serverFlag } from "./ServerFlag.ts"
import { reportStatus } from "./StatusReporter.ts"

export { defaultServer } from "./ServerFlag.ts"

const decodeContext = Schema.decodeUnknownEffect(AgentContext)

/** Reads and validates an AgentContext JSON file; the error names the file and the offending path. */
export const loadContextFile = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((e) => new CliFailure({ message: `Cannot read context file ${file}: ${e.message}` }))
    )
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (e) => new CliFailure({ message: `Invalid context file ${file}: not JSON (${e instanceof Error ? e.message : String(e)})` })
    })
    return yield* decodeContext(json).pipe(
      Effect.mapError((e) => new CliFailure({ message: `Invalid context file ${file}: ${e.message}` }))
    )
  })

const fail = failWith

export const chatCommand = Command.make("chat", {
  message: Argument.String("message").pipe(
    Argument.withDescription("What to say. Without it, one turn per line of stdin."),
    Argument.optional
  ),
  server: serverFlag,
  token: Flag.Redacted("token").pipe(
    Flag.withDescription("Bearer token for /api/* (env SWITCHBOARD_TOKEN, then CHAT_TOKEN)"),
    Flag.withMetavar("TOKEN"),
    Flag.withFallbackConfig(Config.Redacted("SWITCHBOARD_TOKEN").pipe(Config.orElse(() => Config.Redacted("CHAT_TOKEN")))),
    Flag.optional
  ),
  context: Flag.String("context").pipe(
    Flag.withDescription("AgentContext JSON file (project, scene, media assets); remembered for later runs"),
    Flag.withMetavar("FILE"),
    Flag.optional
  ),
  newChat: Flag.Boolean("new").pipe(
    Flag.withDescription("Start a new conversation (forget the stored history)"),
    Flag.withDefault(false)
  )
}, ({ context, message, newChat, server, token }) =>
  Effect.gen(function*() {
    const dir = stateDirectory()
    const chatStore = makeChatStore(fileStorage(dir))
    const agentStore = makeAgentStore(fileStorage(dir))
    if (newChat) chatStore.getState().clearMessages()
    if (Option.isSome(context)) {
      const loaded = yield* loadContextFile(context.value).pipe(
        Effect.catchTag("CliFailure", (e) => fail(e.message))
      )
      agentStore.getState().setContext(loaded)
    }

    const registry = makeDefaultRegistry(yield* MediaTranscriber)
    const orchestrator = makeOrchestrator({ chatStore, agentStore, registry })
    yield* reportStatus(agentStore)

    let failed = 0
    const turn = (text: string) =>
      orchestrator.send(text).pipe(
        Effect.matchEffect({
          onSuccess: (result) => Console.log(result.message.content),
          onFailure: (error) =>
            Effect.andThen(Effect.sync(() => failed++), Console.error(`switchboard: ${error.message}`))
        })
      )

    if (Option.isSome(message)) {
      if (message.value.trim() === "") return yield* fail("the message is empty")
      yield* turn(message.value)
    } else {
      const stdio = yield* Stdio.Stdio
      if (yield* stdio.stdinIsTerminal) {
        yield* Console.error("One message per line; Ctrl+D to finish.")
      }
      yield* stdio.stdin.pipe(
        Stream.decodeText(),
        Stream.splitLines,
        Stream.filter((line) => line.trim() !== ""),
        Stream.runForEach(turn),
        Effect.catch((e) => fail(`cannot read stdin: ${e.message}`))
      )
    }
    if (failed > 0) {
      return yield* new CliFailure({ message: failed === 1 ? "a turn failed" : `${failed} turns failed` })
    }
  }).pipe(
    Effect.scoped,
    Effect.provide(
      Layer.mergeAll(
        ChatTransport.layer({ baseUrl: server, token: Option.getOrUndefined(token) }),
        MediaTranscriber.layer({ baseUrl: server, token: Option.getOrUndefined(token) })
      )
    )
  )).pipe(
    Command.withDescription(
      "Talk to the agent: runs the tool-call loop against a Switchboard server and prints the answer. " +
        "History persists in $SWITCHBOARD_HOME (default ~/.switchboard). " +
        "Exit code 1 when a turn failed."
    ),
    Command.withShortDescription("Talk to the agent through a Switchboard server")
  )
