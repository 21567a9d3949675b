/**
 * The spec's shared types come from one place (`@switchboard/domain`) and
 * compile wherever they are used: here, beside the stores, the orchestrator
 * and the registry that use them. `tsc -p tsconfig.json` checks this file.
 */
import { AgentContext, ChatMessage, ExecutionState, ToolCall, ToolResult } from "@switchboard/domain"
import type {
  AgentContext as AgentContextType,
  ChatMessage as ChatMessageType,
  ExecutionState as ExecutionStateType,
  ExecutionStatus,
  ToolCall as ToolCallType,
  ToolDefinition,
  ToolResult as ToolResultType
} from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import type { RunResult } from "../src/chat/Orchestrator.ts"
import type { AgentState } from "../src/stores/AgentStore.ts"
import type { ChatState } from "../src/stores/ChatStore.ts"
import { ToolRegistry } from "../src/tools/ToolRegistry.ts"

describe("shared types", () => {
  it.effect("Types are importable everywhere", () =>
    Effect.gen(function*() {
      const call: ToolCallType = { id: "c1", name: "transcribe_video", args: {} }
      const result: ToolResultType = { toolCallId: "c1", name: "transcribe_video", result: { text: "hi" } }
      const message: ChatMessageType = { id: "m1", role: "assistant", content: "", toolCalls: [call], timestamp: 1 }
      const state: ExecutionStateType = "processing"
      const status: ExecutionStatus = state
      const context: AgentContextType = { projectId: "p", activeSceneId: null, mediaAssets: [], playbackTimeMs: 0 }
      const tool: ToolDefinition = {
        name: "noop",
        description: "does nothing",
        parameters: [],
        execute: () => Effect.succeed(null)
      }
      // the same types line up with the stores, the orchestrator and the registry
      const chatMessages: ChatState["messages"] = [message]
      const agentStatus: AgentState["status"] = status
      const agentContext: AgentState["context"] = context
      const answered: RunResult = { _tag: "Answered", message, iterations: 1, jobs: [] }
      new ToolRegistry().register(tool)

      // and their runtime schemas accept what the types describe
      yield* Schema.decodeUnknownEffect(ToolCall)(call)
      yield* Schema.decodeUnknownEffect(ToolResult)(result)
      yield* Schema.decodeUnknownEffect(ChatMessage)(chatMessages[0])
      yield* Schema.decodeUnknownEffect(ExecutionState)(agentStatus)
      yield* Schema.decodeUnknownEffect(AgentContext)(agentContext)
      assert.strictEqual(answered.message.toolCalls?.[0]?.name, "transcribe_video")
    }))
})
