/**
 * Test doubles: a scripted `ChatTransport` that records every request, a
 * recording `MediaTranscriber`, fake tools, and stores over memory.
 */
import type { AgentContext, AgentInfo, ChatRequest, ChatResponse, ToolCall, ToolDefinition, ToolParameter } from "@switchboard/domain"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ChatTransport, ChatTransportError } from "../../src/chat/ChatTransport.ts"
import type { MediaTranscriber, MediaUpload } from "../../src/api/MediaTranscriber.ts"
import { makeAgentStore } from "../../src/stores/AgentStore.ts"
import { makeChatStore } from "../../src/stores/ChatStore.ts"
import { memoryStorage } from "../../src/stores/StateStorage.ts"

export type ScriptStep = ChatResponse | ChatTransportError | ((request: ChatRequest) => ChatResponse)

/**
 * Answers with the script's steps in order; past its end, fails like a server would.
 * `agents` answers the agent lookups (recorded in `agentLookups`); any other name is a 404.
 */
export const scriptedTransport = (script: ReadonlyArray<ScriptStep>, agents: ReadonlyArray<AgentInfo> = []) => {
  const requests: Array<ChatRequest> = []
  const agentLookups: Array<string> = []
  const layer = ChatTransport.layerTest((request) =>
    Effect.suspend(() => {
      // Snapshot: the orchestrator keeps growing its history array after the call.
      requests.push(structuredClone(request))
      const step = script[requests.length - 1]
      if (step === undefined) {
        return Effect.fail(new ChatTransportError({ message: "script exhausted", status: 500 }))
      }
      if (step instanceof ChatTransportError) return Effect.fail(step)
      return Effect.succeed(typeof step === "function" ? step(request) : step)
    }), (name) =>
    Effect.suspend(() => {
      agentLookups.push(name)
      const found = agents.find((agent) => agent.name === name)
      return found !== undefined
        ? Effect.succeed(found)
        : Effect.fail(new ChatTransportError({ message: `No agent named "${name}"`, status: 404, code: "agent_not_found" }))
    }))
  return { layer, requests, agentLookups }
}

let seq = 0
export const answer = (content: string): ChatResponse => ({ content, toolCalls: [], messageId: `srv_${++seq}` })
export const callTools = (...toolCalls: ReadonlyArray<Omit<ToolCall, "id"> & { readonly id?: string }>): ChatResponse => ({
  content: "",
  toolCalls: toolCalls.map((call) => ({ ...call, id: call.id ?? `call_${++seq}` })),
  messageId: `srv_${++seq}`
})

export const makeStores = () => {
  const storage = memoryStorage()
  return { storage, chatStore: makeChatStore(storage), agentStore: makeAgentStore(storage) }
}

/** A transcriber that records uploads and answers with `text`. */
export const recordingTranscriber = (text = "Hello from the video") => {
  const uploads: Array<MediaUpload> = []
  const transcriber: typeof MediaTranscriber.Service = {
    transcribe: (upload) =>
      Effect.sync(() => {
        uploads.push(upload)
        return text
      })
  }
  return { transcriber, uploads }
}

/** A tool that records its calls. */
export const fakeTool = (
  name: string,
  parameters: ReadonlyArray<ToolParameter>,
  execute: ToolDefinition["execute"] = () => Effect.succeed("ok")
) => {
  const calls: Array<Readonly<Record<string, unknown>>> = []
  const tool: ToolDefinition = {
    name,
    description: `fake ${name}`,
    parameters,
    execute: (args, context) => {
      calls.push(args)
      return execute(args, context)
    }
  }
  return { tool, calls }
}

export const tempDir = (prefix = "switchboard-cli-") => fs.mkdtempSync(path.join(os.tmpdir(), prefix))

/** A context whose one video asset holds `bytes`, inline (a `data:` URI: what the client reads without a disk). */
export const contextWithVideo = (bytes: Uint8Array = new Uint8Array([0, 0, 0, 24, 102, 116, 121, 112])) => {
  const uri = `data:video/mp4;base64,${Buffer.from(bytes).toString("base64")}`
  const context: AgentContext = {
    projectId: "proj_1",
    activeSceneId: null,
    mediaAssets: [{ id: "vid_1", name: "clip.mp4", kind: "video", uri }],
    playbackTimeMs: 0
  }
  return { context, bytes }
}
