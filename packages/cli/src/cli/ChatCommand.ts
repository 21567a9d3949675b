/**
 * `switchboard chat [message]`: the orchestrator against a server.
 *
 * With a message, runs one turn and prints the answer on stdout as it streams
 * (`--no-stream`: once it is whole); without, reads stdin and runs one turn
 * per non-empty line. Ctrl+C during a turn stops it (the server keeps the
 * answer so far, which is printed); a second Ctrl+C quits. History and context live
 * in the state directory (`$SWITCHBOARD_HOME`, default `~/.switchboard`), so a
 * conversation continues across runs until `--new`. Status goes to stderr.
 * `--agent NAME` names the agent of every turn; its client tools are checked
 * against this CLI's registry (`transcribe_video` only) before the first turn.
 * A server tool call that needs approval is asked on stderr and the next line
 * answers it — a turn's, and, while the chat's jobs are followed, a sub-agent
 * job's parked on one (JobApprovals.ts): once per approval.
 * Exit code 1 when a turn failed (API or network error; a busy server's 503
 * `overloaded` is said as `Switchboard is busy (too many turns at once); retry
 * in 3 s`, not retried) or the input is bad.
 */
import { AgentContext } from "@switchboard/domain"
import type { PendingApproval } from "@switchboard/domain"
import { Console, Effect, Fiber, FileSystem, Layer, Option, Schedule, Schema, Semaphore, Stdio, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import type { RunResult, TurnError } from "@switchboard/client"
import { ApiClient, ChatTransport, jobPollMs, makeAgentStore, makeChatStore, makeDefaultRegistry, makeJobWatch, makeOrchestrator, MediaTranscriber } from "@switchboard/client"
import { fileStorage, stateDirectory } from "../stores/FileStorage.ts"
import { readAssetFromDisk } from "../tools/FileAssets.ts"
import { CliFailure, failWith } from "./CliFailure.ts"
import { apiOptions, failureLine, tokenFlag, userFlag } from "./CredentialFlags.ts"
import { printJobEvent } from "./JobLines.ts"
import { serverFlag } from "./ServerFlag.ts"
import { reportStatus, stderrOutput } from "./StatusReporter.ts"
import { makeAnswerPrinter } from "./AnswerPrinter.ts"
import { firstCtrlCStops } from "./CtrlC.ts"
import { approvalAnswer, approvalQuestion } from "./ApprovalPrompt.ts"
import { makeJobApprovals } from "./JobApprovals.ts"
import * as path from "node:path"

export { defaultServer } from "./ServerFlag.ts"
export { tokenFlag } from "./CredentialFlags.ts"

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
  token: tokenFlag,
  user: userFlag,
  context: Flag.String("context").pipe(
    Flag.withDescription("AgentContext JSON file (project, scene, media assets); remembered for later runs"),
    Flag.withMetavar("FILE"),
    Flag.optional
  ),
  agent: Flag.String("agent").pipe(
    Flag.withDescription(
      "The agent to talk to (default: the conversation's, else the server's default agent). Checked first: this CLI " +
        "implements only the client tool transcribe_video, so an agent with other client tools is refused, naming them"
    ),
    Flag.withMetavar("NAME"),
    Flag.optional
  ),
  newChat: Flag.Boolean("new").pipe(
    Flag.withDescription("Start a new conversation (forget the stored history)"),
    Flag.withDefault(false)
  ),
  noStream: Flag.Boolean("no-stream").pipe(
    Flag.withDescription("Print each answer once it is whole instead of as it streams"),
    Flag.withDefault(false)
  ),
  noWait: Flag.Boolean("no-wait").pipe(
    Flag.withDescription("Do not wait for the sub-agent jobs a turn dispatched (their results stay in the transcript)"),
    Flag.withDefault(false)
  ),
  artifacts: Flag.String("artifacts").pipe(
    Flag.withDescription("Where demos (.html) and figures (.svg) of finished jobs are saved (default $SWITCHBOARD_HOME/artifacts)"),
    Flag.withMetavar("DIR"),
    Flag.optional
  )
}, ({ agent, artifacts, context, message, newChat, noStream, noWait, server, token, user }) =>
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

    const registry = makeDefaultRegistry(yield* MediaTranscriber, { readAsset: readAssetFromDisk })
    const printer = makeAnswerPrinter((text) => {
      process.stdout.write(text)
    })
    // Without streaming, a tool round's text arrives whole with its calls: printed then, before its
    // tools run, as a streamed round's is (the turn's last answer is `printer.finish`'s). Only while
    // a turn runs (`loading`): a re-sync between turns prints nothing.
    if (noStream) {
      chatStore.subscribe((state, previous) => {
        if (!state.loading || state.messages.length !== previous.messages.length + 1) return
        const added = state.messages.at(-1)
        if (added?.role === "assistant" && (added.toolCalls?.length ?? 0) > 0) printer.delta(added.content, added.id)
      })
    }
    const orchestrator = makeOrchestrator({
      chatStore,
      agentStore,
      registry,
      agent: Option.getOrUndefined(agent),
      streaming: !noStream,
      onDelta: printer.delta
    })
    // Before anything is sent or stored: a refused agent leaves the conversation as it was.
    yield* orchestrator.checkAgent.pipe(Effect.catch((error) => fail(failureLine(error, token))))
    yield* reportStatus(agentStore, {
      ...stderrOutput,
      write: (text) => {
        printer.endLine()
        stderrOutput.write(text)
      }
    })

    const lock = yield* Semaphore.make(1)
    /** Server tool calls the last answer waits on: the next line typed answers the first. */
    let waiting: ReadonlyArray<PendingApproval> = []
    /** While a turn runs, a job's question waits for its end (`ask`). */
    let inTurn = false
    // The followed jobs' calls that need approval: asked after the turn's own, one at a time.
    const parked = makeJobApprovals({
      chatId: () => chatStore.getState().chatId,
      write: (text) => {
        printer.endLine()
        process.stderr.write(text)
      }
    })
    const printEvent = printJobEvent(Option.getOrElse(artifacts, () => path.join(dir, "artifacts")))
    const watch = makeJobWatch({
      client: yield* ApiClient,
      chatStore,
      orchestrator,
      lock,
      onEvent: (event) =>
        printEvent(event).pipe(
          Effect.andThen(parked.track(event)),
          Effect.andThen(Effect.suspend(() => inTurn || waiting.length > 0 ? Effect.void : parked.ask))
        )
    })

    // Results that arrived since the last run (e.g. after `--no-wait`) first, then the jobs still running.
    yield* watch.catchUp

    let failed = 0
    // A server-side wake turn (a sub-agent's result arriving) holds the chat for one provider call:
    // a 409 then means "in a moment", so the turn is retried rather than failed.
    const busy = (error: { readonly code?: string }) => error.code === "turn_in_flight"
    const refused = (error: { readonly code?: string }) => error.code === "unauthenticated"
    const retryWhileBusy = <A, R>(effect: Effect.Effect<A, { readonly code?: string; readonly message: string }, R>) =>
      effect.pipe(Effect.retry({ while: busy, schedule: Schedule.spaced("500 millis"), times: 40 }))
    const stopTurn = Effect.sync(printer.endLine).pipe(
      Effect.andThen(Console.error("switchboard: stopping the turn (Ctrl+C again to quit)")),
      Effect.andThen(orchestrator.stop)
    )
    /** The turn's first question, else a parked job's. */
    const ask = Effect.suspend(() => {
      const first = waiting[0]
      return first === undefined ? parked.ask : Effect.sync(() => {
        printer.endLine()
        process.stderr.write(approvalQuestion(first))
      })
    })
    const handled = (run: Effect.Effect<RunResult, TurnError, ChatTransport>) => {
      const answered = firstCtrlCStops(run.pipe(Effect.catchIf(busy, () => retryWhileBusy(orchestrator.run()))), stopTurn).pipe(
        Effect.matchEffect({
          onSuccess: (result) =>
            Effect.sync(() => {
              waiting = result._tag === "Answered" ? result.pendingApprovals ?? [] : []
              // An answer that only asks for approval says nothing: its question is all there is to print.
              if (waiting.length === 0 || result.message.content !== "") printer.finish(result.message)
              watch.expect(result.jobs.map((j) => j.id))
            }).pipe(Effect.andThen(
              result._tag === "Stopped"
                ? Console.error("switchboard: the turn was stopped; the answer so far is kept").pipe(Effect.andThen(ask))
                : ask
            )),
          onFailure: (error) =>
            Effect.sync(() => {
              printer.endLine()
              failed++
              waiting = waiting.slice(1)
            }).pipe(Effect.andThen(
              // A refused token refuses every later turn too: said once, and the command ends.
              refused(error) ? fail(failureLine(error, token)) : Console.error(`switchboard: ${error.message}`)
            ), Effect.andThen(ask))
        })
      )
      return lock.withPermits(1)(
        Effect.sync(() => void (inTurn = true)).pipe(
          Effect.andThen(answered),
          Effect.ensuring(Effect.sync(() => void (inTurn = false)))
        )
      )
    }
    /** A line typed: the answer to the question asked (a turn's, else a parked job's), else the next message. */
    const turn = (text: string) => {
      const first = waiting[0]
      if (first !== undefined) {
        const { approved, reason } = approvalAnswer(text)
        return handled(orchestrator.decide(first.approvalId, approved, reason))
      }
      if (parked.asking()) return parked.answer(text).pipe(Effect.andThen(parked.ask))
      return handled(orchestrator.send(text))
    }
    /**
     * Until no followed job runs: each poll's events printed, and each parked job's question
     * answered by `nextLine` before the next poll.
     */
    const followJobs = (nextLine: Effect.Effect<string | undefined>) =>
      Effect.gen(function*() {
        const answerParked = Effect.gen(function*() {
          yield* parked.ask
          while (parked.asking()) {
            yield* parked.answer(yield* nextLine)
            yield* parked.ask
          }
        })
        yield* answerParked
        while (watch.watching() && (yield* watch.poll)) {
          yield* answerParked
          yield* Effect.sleep(jobPollMs)
        }
      })

    if (Option.isSome(message)) {
      if (message.value.trim() === "") return yield* fail("the message is empty")
      yield* turn(message.value)
      /** Without a terminal of messages (one message given): the answers, one line of stdin each; none: no. */
      const stdio = yield* Stdio.Stdio
      const pull = yield* Stream.toPull(stdio.stdin.pipe(Stream.decodeText(), Stream.splitLines))
      const buffered: Array<string> = []
      let ended = false
      const nextLine = Effect.gen(function*() {
        while (buffered.length === 0 && !ended) {
          const chunk = yield* pull.pipe(Effect.orElseSucceed(() => undefined))
          if (chunk === undefined) ended = true
          else buffered.push(...chunk)
        }
        const line = buffered.shift()
        // A terminal echoes what is typed; an answer from a pipe is shown after its question.
        if (line !== undefined && !(yield* stdio.stdinIsTerminal)) process.stderr.write(`${line}\n`)
        return line
      })
      while (waiting.length > 0) {
        const { approved, reason } = approvalAnswer(yield* nextLine)
        yield* handled(orchestrator.decide(waiting[0]!.approvalId, approved, reason))
      }
      if (!noWait) yield* followJobs(nextLine)
    } else {
      const stdio = yield* Stdio.Stdio
      if (yield* stdio.stdinIsTerminal) {
        yield* Console.error("One message per line; Ctrl+D to finish.")
      }
      // The user can type while jobs run: their results are followed in the background, between turns.
      const follower = yield* Effect.forkChild(Effect.forever(
        Effect.suspend(() => watch.watching() ? watch.poll : Effect.succeed(false)).pipe(Effect.andThen(Effect.sleep(jobPollMs)))
      ))
      yield* stdio.stdin.pipe(
        Stream.decodeText(),
        Stream.splitLines,
        Stream.filter((line) => line.trim() !== ""),
        Stream.runForEach(turn),
        Effect.catch((e) => e._tag === "CliFailure" ? Effect.fail(e) : fail(`cannot read stdin: ${e.message}`))
      )
      yield* Fiber.interrupt(follower)
      // Stdin has ended: a job that parks from now on is denied, as a turn's question would be.
      if (!noWait) yield* followJobs(Effect.succeed(undefined))
    }
    const undecided = parked.failures()
    if (failed > 0 || undecided > 0) {
      const turns = failed === 0 ? [] : [failed === 1 ? "a turn failed" : `${failed} turns failed`]
      const decisions = undecided === 0 ? [] : [undecided === 1 ? "a job's decision failed" : `${undecided} jobs' decisions failed`]
      return yield* new CliFailure({ message: [...turns, ...decisions].join("; ") })
    }
  }).pipe(
    Effect.scoped,
    Effect.provide(
      Layer.mergeAll(
        ChatTransport.layer(apiOptions({ server, token, user })),
        MediaTranscriber.layer(apiOptions({ server, token, user })),
        // The jobs poll and the transcript re-sync.
        ApiClient.layer(apiOptions({ server, token, user }))
      )
    )
  )).pipe(
    Command.withDescription(
      "Talk to the agent: runs the tool-call loop against a Switchboard server and prints the answer as it streams " +
        "(--no-stream: once it is whole). Ctrl+C during a turn stops it and prints what the server kept; a second " +
        "Ctrl+C quits. " +
        "--agent NAME talks to another agent than the default; it is refused before the first turn when it has " +
        "client tools other than transcribe_video (the only one this CLI implements), naming them. " +
        "History persists in $SWITCHBOARD_HOME (default ~/.switchboard). " +
        "--token is a user's JWT or the server's CHAT_TOKEN (with --user NAME, the user it acts for); a refused token " +
        "ends the command. Exit code 1 when a turn failed."
    ),
    Command.withShortDescription("Talk to the agent through a Switchboard server")
  )
