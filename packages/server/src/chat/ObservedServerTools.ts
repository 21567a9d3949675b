/**
 * A turn's server tools (the job tools) with an `execute_tool {name}` span per
 * call when tracing (`telemetry/GenAi.ts`). A round's calls are executed
 * together (one statement records their jobs), so their spans share its time;
 * a dispatched job's id is on its call's span.
 */
import { Effect, Layer } from "effect"
import { executeTools } from "../telemetry/GenAi.ts"
import { ServerTools } from "./ServerTools.ts"
import type { ServerToolsShape } from "./ServerTools.ts"

export const observeServerTools = (tools: ServerToolsShape): ServerToolsShape => ({
  ...tools,
  execute: (turn, calls) =>
    tools.execute(turn, calls).pipe(executeTools(calls, turn.chatId, (done, call) => {
      const result = done.results.find((m) => m.toolResult?.toolCallId === call.id)?.toolResult
      return {
        jobId: done.dispatched.find((d) => d.toolCallId === call.id)?.id,
        outcome: result === undefined ? undefined : result.error !== undefined ? { error: result.error } : { result: result.result }
      }
    }))
})

/** A server tools layer, observed (`observeServerTools`). */
export const observedServerTools = <ROut, E, R>(tools: Layer.Layer<ROut, E, R>) =>
  Layer.effect(ServerTools, Effect.gen(function*() {
    return observeServerTools(yield* ServerTools)
  })).pipe(Layer.provide(tools))
