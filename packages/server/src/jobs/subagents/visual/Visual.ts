/**
 * The visual sub-agent: a maker draws ONE SVG figure, which is checked,
 * rendered and (with a model that takes images) looked at before delivery.
 *
 * Its one tool, `write_svg`, refuses an SVG that is unsafe to show inline
 * (`SvgSafety`) or that does not parse or draws nothing (`SvgRender`), with
 * the reason, for at most `VISUAL_MAX_ATTEMPTS` tries. The first SVG that
 * renders is shown to the maker as a PNG on its next call (once: "looks at its
 * render once"), and it may send a revision, which is checked the same way
 * and then delivered without a second look. With `JOB_VISUAL_VISION=0` (a
 * text-only model) the first good SVG is delivered at once; a provider that
 * refuses the image (a 4xx) is asked again without it.
 */
import { Effect, Schema } from "effect"
import type { VisualResult, VisualToolInput } from "@switchboard/domain"
import type { ProviderAdapter } from "@switchboard/providers"
import { providerFailureNote, runToolLoop, tool, ToolFailure } from "../ToolLoop.ts"
import { svgSafetyProblems } from "./SvgSafety.ts"
import { renderSvg } from "./SvgRender.ts"

export const VISUAL_MAX_ATTEMPTS = 4
export const VISUAL_MAX_ROUNDS = 7
export const VISUAL_MAX_SVG_BYTES = 512 * 1024

export interface VisualDeps {
  readonly model: string | undefined
  /** Show the maker its render (`JOB_VISUAL_VISION`, on by default). */
  readonly vision: boolean
}

const systemPrompt = (vision: boolean) =>
  [
    "You are a visual maker sub-agent. You draw ONE figure for a teacher as a single SVG document: a root <svg> with",
    "xmlns=\"http://www.w3.org/2000/svg\" and a viewBox, clear labels, readable text (font-family sans-serif).",
    "It is shown inline in a web page, so it must be a picture only: no <script>, no event handlers (on…), no",
    "<foreignObject>, no external references (href only to #ids or data:image, no external fonts or stylesheets).",
    "Deliver it by calling write_svg with the complete SVG; pass notes naming the figure's elements.",
    vision
      ? "It is rendered to PNG and shown to you once: check it against the brief, then either call write_svg with a corrected SVG or answer with a one-line note."
      : "It is rendered to check that it parses and draws something; errors come back to you to fix."
  ].join("\n")

const WriteSvgArgs = Schema.Struct({
  svg: Schema.String.check(Schema.isMinLength(1)).annotate({ description: "The whole SVG document." }),
  notes: Schema.optionalKey(Schema.String.annotate({ description: "The figure's elements, for the teacher." }))
})

const failure = (reason: string): VisualResult => ({ svg: "", notes: reason })

export const runVisual = (
  deps: VisualDeps,
  input: VisualToolInput,
  reportActivity: (line: string) => Effect.Effect<void>
): Effect.Effect<VisualResult, never, ProviderAdapter> =>
  Effect.gen(function*() {
    let attempts = 0
    let looked = false
    let good: { readonly svg: string; readonly notes?: string } | undefined
    let lastProblem: string | undefined

    const writeSvg = tool({
      name: "write_svg",
      description: "Deliver the complete SVG figure; it is checked and rendered at once.",
      args: WriteSvgArgs,
      activity: () => `write_svg: rendering the figure (attempt ${attempts + 1})`,
      execute: ({ notes, svg }) =>
        Effect.gen(function*() {
          attempts++
          const refuse = (problem: string) => {
            lastProblem = problem
            if (attempts >= VISUAL_MAX_ATTEMPTS) {
              return Effect.succeed({ result: { status: "refused", problem }, finish: true })
            }
            return Effect.fail(new ToolFailure({ message: `${problem}\nFix it and call write_svg again with the whole SVG.` }))
          }
          if (Buffer.byteLength(svg) > VISUAL_MAX_SVG_BYTES) {
            return yield* refuse(`refused: the SVG is larger than ${VISUAL_MAX_SVG_BYTES} bytes`)
          }
          const unsafe = svgSafetyProblems(svg)
          if (unsafe.length > 0) {
            return yield* refuse(`refused: the SVG is shown inline in a web page, so it must not carry code or external references: ${unsafe.join("; ")}`)
          }
          const render = renderSvg(svg)
          if (render._tag === "Refused") return yield* refuse(render.problem)

          good = notes !== undefined && notes.trim() !== "" ? { svg, notes: notes.trim() } : { svg }
          if (!deps.vision || looked) return { result: { status: "delivered" }, finish: true }
          looked = true
          return {
            result: {
              status: "rendered",
              width: render.width,
              height: render.height,
              message: "The render is attached. If it does not show the brief exactly, call write_svg with a corrected SVG; otherwise answer with a one-line note."
            },
            images: [{ mediaType: "image/png" as const, data: render.png.toString("base64") }]
          }
        })
    })

    const outcome = yield* runToolLoop({
      systemPrompt: systemPrompt(deps.vision),
      task: `Brief: ${input.brief}`,
      tools: [writeSvg],
      model: deps.model,
      maxRounds: VISUAL_MAX_ROUNDS,
      reportActivity,
      retryWithoutImages: true
    }).pipe(Effect.result)

    if (outcome._tag === "Failure") {
      // A figure that rendered before the provider failed (during the look) is still a checked figure.
      return good !== undefined ? { ...good } : failure(yield* providerFailureNote(outcome.failure))
    }
    if (good !== undefined) {
      const answer = outcome.success._tag === "Answered" ? outcome.success.content.trim() : ""
      const notes = good.notes ?? (answer !== "" ? answer : undefined)
      return notes !== undefined ? { svg: good.svg, notes } : { svg: good.svg }
    }
    if (lastProblem !== undefined) return failure(`no usable SVG after ${attempts} attempts: ${lastProblem}`)
    return failure("the maker answered without drawing a figure")
  })
