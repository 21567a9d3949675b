/**
 * The demo sub-agent: a builder writes ONE self-contained HTML document and
 * proves it runs before it is delivered.
 *
 * Its one tool, `write_demo`, loads the document in headless Chromium
 * (`HeadlessBrowser`). A page that passes ends the work with `tested: true`.
 * A page that fails (uncaught errors, console errors, network requests, an
 * empty body) goes back to the builder as the call's error, for at most
 * `DEMO_MAX_FIXES` fixes; past that, or when there is no browser to test in,
 * the result is the failure shape with notes saying why. A demo is never
 * delivered untested.
 */
import { Effect, Schema } from "effect"
import type { DemoResult, DemoToolInput } from "@switchboard/domain"
import type { ProviderAdapter } from "@switchboard/providers"
import { providerFailureNote, runToolLoop, tool, ToolFailure } from "../ToolLoop.ts"
import type { HeadlessBrowser } from "./HeadlessBrowser.ts"

/** Fixes after the first failing test. */
export const DEMO_MAX_FIXES = 3
export const DEMO_MAX_ROUNDS = 8
export const DEMO_MAX_HTML_BYTES = 1024 * 1024

export interface DemoDeps {
  readonly browser: HeadlessBrowser
  readonly model: string | undefined
}

const systemPrompt = [
  "You are a demo builder sub-agent. You build ONE interactive demo for a teacher, as a single self-contained HTML",
  "document: inline <style> and <script> only, no external scripts, stylesheets, fonts, images or requests of any kind",
  "(the page runs with the network blocked, in a sandboxed iframe). Images, if any, as inline SVG or data: URLs.",
  "Label every control clearly; the teacher will refer to them by name.",
  "Deliver it by calling write_demo with the complete document. It is then loaded in a headless browser: if it throws,",
  "logs a console error, requests anything from the network or renders nothing, you get the errors back and must fix",
  "them and call write_demo again with the whole corrected document. Then each control is operated once: its handler",
  "must not throw either. Pass notes: what the demo shows and its controls."
].join("\n")

const taskText = (input: DemoToolInput) => `Demo title: ${input.title}\nBrief: ${input.brief}`

const WriteDemoArgs = Schema.Struct({
  html: Schema.String.check(Schema.isMinLength(1)).annotate({ description: "The whole self-contained HTML document." }),
  notes: Schema.optionalKey(Schema.String.annotate({ description: "What the demo shows; its controls by name." }))
})

const failure = (input: DemoToolInput, reason: string): DemoResult => ({
  title: input.title,
  html: "",
  tested: false,
  notes: reason
})

export const runDemo = (
  deps: DemoDeps,
  input: DemoToolInput,
  reportActivity: (line: string) => Effect.Effect<void>
): Effect.Effect<DemoResult, never, ProviderAdapter> =>
  Effect.gen(function*() {
    // No browser, no verified demo: say so before spending any model call.
    const available = yield* deps.browser.available.pipe(Effect.result)
    if (available._tag === "Failure") return failure(input, available.failure.message)

    let attempts = 0
    let passed: { readonly html: string; readonly notes?: string } | undefined
    let stopped: string | undefined

    const writeDemo = tool({
      name: "write_demo",
      description: "Deliver the complete demo document; it is tested in a headless browser at once.",
      args: WriteDemoArgs,
      activity: () => `write_demo: testing "${input.title}" in headless Chromium (attempt ${attempts + 1})`,
      execute: ({ html, notes }) =>
        Effect.gen(function*() {
          if (Buffer.byteLength(html) > DEMO_MAX_HTML_BYTES) {
            return yield* new ToolFailure({ message: `the document is larger than ${DEMO_MAX_HTML_BYTES} bytes: make it smaller` })
          }
          attempts++
          const checked = yield* deps.browser.check(html).pipe(Effect.result)
          if (checked._tag === "Failure") {
            stopped = checked.failure.message
            return { result: { status: "not tested", reason: stopped }, finish: true }
          }
          const { problems } = checked.success
          if (problems.length === 0) {
            passed = notes !== undefined && notes.trim() !== "" ? { html, notes: notes.trim() } : { html }
            return { result: { status: "passed", message: "The demo loaded with no errors. It will be delivered." }, finish: true }
          }
          if (attempts > DEMO_MAX_FIXES) {
            stopped = `the demo still failed its headless test after ${attempts} attempts: ${problems.join("; ")}`
            return { result: { status: "failed", problems }, finish: true }
          }
          return yield* new ToolFailure({
            message: `the demo failed its headless test (attempt ${attempts} of ${DEMO_MAX_FIXES + 1}):\n- ${
              problems.join("\n- ")
            }\nFix every problem and call write_demo again with the whole corrected document.`
          })
        })
    })

    const outcome = yield* runToolLoop({
      systemPrompt,
      task: taskText(input),
      tools: [writeDemo],
      model: deps.model,
      maxRounds: DEMO_MAX_ROUNDS,
      reportActivity
    }).pipe(Effect.result)

    if (passed !== undefined) {
      return { title: input.title, html: passed.html, tested: true, ...(passed.notes !== undefined ? { notes: passed.notes } : {}) }
    }
    if (outcome._tag === "Failure") return failure(input, yield* providerFailureNote(outcome.failure))
    if (stopped !== undefined) return failure(input, stopped)
    return failure(
      input,
      attempts === 0
        ? "the builder answered without writing a demo"
        : `no passing demo after ${attempts} attempts in ${outcome.success.rounds} rounds`
    )
  })
