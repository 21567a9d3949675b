/**
 * The built-in agent's own vocabulary: the spec's media editor knows a project
 * (`AgentContext`: its scene, playback position and media assets) and offers
 * one client tool, `transcribe_video`. Nothing generic depends on these: the
 * server seeds the `media-editor` definition from them (agents/MediaEditor.ts)
 * and a client implements the tool.
 */
import { Schema } from "effect"
import { NonEmptyText, Text } from "./Json.ts"
import { toolFromSchema } from "./ToolFromSchema.ts"
import type { ToolSchema } from "./ToolSchema.ts"

export const MediaKind = Schema.Literals(["video", "audio", "image"])
export type MediaKind = typeof MediaKind.Type

export const MediaAsset = Schema.Struct({
  id: NonEmptyText,
  name: Text,
  kind: MediaKind,
  /** A `file://` URL, a local path or an `http(s)://` URL the client can read. */
  uri: NonEmptyText,
  durationMs: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)))
})
export type MediaAsset = typeof MediaAsset.Type

export const AgentContext = Schema.Struct({
  projectId: NonEmptyText,
  activeSceneId: Schema.NullOr(Text),
  mediaAssets: Schema.Array(MediaAsset),
  playbackTimeMs: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
})
export type AgentContext = typeof AgentContext.Type

/** The arguments of `transcribe_video`: the one declaration its parameters and JSON Schema are derived from. */
export const TranscribeVideoArgs = Schema.Struct({
  assetId: Schema.optionalKey(Text.annotate({ description: "Id of the media asset to transcribe." })),
  language: Schema.optionalKey(Text.annotate({ description: "ISO-639-1 code of the spoken language, e.g. \"en\"." }))
})
export type TranscribeVideoArgs = typeof TranscribeVideoArgs.Type

/** `transcribe_video`: the one client-side tool of this phase. */
export const TranscribeVideo: ToolSchema = toolFromSchema(
  "transcribe_video",
  "Transcribe the speech in one of the project's media assets (video or audio). " +
    "Without assetId, the first video asset of the project is used. Returns the transcript text.",
  TranscribeVideoArgs
)

/** The schemas of every tool the client executes, in registration order. */
export const clientToolSchemas: ReadonlyArray<ToolSchema> = [TranscribeVideo]
