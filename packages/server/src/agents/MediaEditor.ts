/**
 * The built-in `media-editor`, the spec's video-editor agent and the default:
 * its tool `transcribe_video`, every job kind, its context an `AgentContext`
 * (decoded: keys it does not know dropped), its prompt `buildSystemPrompt`.
 *
 * The prompt is pure, and deterministic for a given context, so that identical
 * requests send identical prompts (provider-side prompt caching keys on the prefix).
 */
import type { AgentContext, AgentDefinition, JsonObject } from "@switchboard/domain"
import { AgentContext as AgentContextSchema, BUILT_IN_AGENT, InvalidRequest, JobKind, TranscribeVideo } from "@switchboard/domain"
import { Effect, Schema } from "effect"
import { describeSchemaError } from "../http/RequestErrors.ts"
import type { BuiltInAgent } from "./BuiltInAgent.ts"

const formatMs = (ms: number) => {
  const total = Math.floor(ms / 1000)
  const minutes = Math.floor(total / 60)
  const seconds = String(total % 60).padStart(2, "0")
  return `${minutes}:${seconds}`
}

const BASE = [
  "You are the assistant inside a media editing project. Help the user with their project.",
  "Use the tools you are given when they help; call a tool only with the arguments its schema declares.",
  "When a tool result carries an error, explain what went wrong or try another way instead of repeating the same call.",
  "Answer in plain prose once you have what you need."
].join("\n")

/** What `GET /admin/agents` shows as its prompt: the fixed part, and what follows it. */
const PROMPT_DESCRIPTION = `${BASE}\n\n` +
  "(then, in a persisted chat, what the job tools do; then the request's project context: the project, the " +
  "active scene, the playback position and the media assets — built by buildSystemPrompt(context))"

export interface SystemPromptOptions {
  /** What the server tools' port says of them, while they are offered (a persisted chat). */
  readonly serverTools?: string | undefined
}

export const buildSystemPrompt = (context: AgentContext | undefined | null, options: SystemPromptOptions = {}): string => {
  const base = options.serverTools === undefined ? BASE : `${BASE}\n${options.serverTools}`
  if (!context) return `${base}\n\nNo project context was provided.`
  const assets = context.mediaAssets.length === 0
    ? "- (none)"
    : context.mediaAssets.map((a) => {
      const duration = a.durationMs === undefined ? "" : `, ${formatMs(a.durationMs)}`
      return `- ${a.id}: "${a.name}" (${a.kind}${duration})`
    }).join("\n")
  return [
    base,
    "",
    "Project context:",
    `- project: ${context.projectId}`,
    `- active scene: ${context.activeSceneId ?? "none"}`,
    `- playback position: ${formatMs(context.playbackTimeMs)}`,
    "Media assets (id: name):",
    assets
  ].join("\n")
}

const decodeContext = Schema.decodeUnknownEffect(AgentContextSchema)

export const mediaEditorDefinition: AgentDefinition = {
  name: BUILT_IN_AGENT,
  description: "The media editing assistant: transcribes the project's videos and dispatches research, demos and figures.",
  systemPrompt: PROMPT_DESCRIPTION,
  tools: [TranscribeVideo],
  jobKinds: [...JobKind.literals],
  builtIn: true
}

export const mediaEditor: BuiltInAgent = {
  definition: mediaEditorDefinition,
  prompt: (context, serverTools) => buildSystemPrompt(context as AgentContext | undefined, { serverTools }),
  context: (context) =>
    decodeContext(context).pipe(
      Effect.mapError((error) =>
        new InvalidRequest({ error: `Invalid request body: ${describeSchemaError(error.message).replace(/ at /, " at context.")}` })
      ),
      Effect.map((decoded): JsonObject => decoded as unknown as JsonObject)
    )
}
