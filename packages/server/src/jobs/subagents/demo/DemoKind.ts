/** The `demo` job kind: a builder sub-agent that writes one interactive HTML demo and tests it in a headless browser. */
import { DemoJob } from "@switchboard/domain"
import { Effect } from "effect"
import { defineJobKind, inputField, quoted } from "../../JobKindDefinition.ts"
import { activityLine } from "../ToolLoop.ts"
import { runDemo } from "./Demo.ts"
import * as HeadlessBrowser from "./HeadlessBrowser.ts"

export const demoKind = defineJobKind(DemoJob, {
  modelVariable: "JOB_MODEL_DEMO",
  startActivity: (input) => activityLine(`building demo:${quoted(inputField(input, "title"))}`),
  doneActivity: (result) => activityLine(`done: demo${quoted(result.title)}`),
  subagent: (settings) =>
    Effect.gen(function*() {
      // Launched on the first demo, not here: a server that never builds a demo never starts a browser.
      const browser = yield* HeadlessBrowser.make(settings.chromiumPath)
      return (input, reportActivity) => runDemo({ browser, model: settings.models.demo }, input, reportActivity)
    })
})
