/**
 * `transcribe_video`, the one client-side tool of this phase. Its schema is the
 * domain's `TranscribeVideo`, so the parameters the server offers the model
 * are exactly the ones validated and executed here.
 *
 * Execution: pick the asset from the AgentContext (`assetId`, else the first
 * video asset), read its bytes (a `file://` URL or a local path from disk, an
 * `http(s)://` URL with fetch), upload them through `MediaTranscriber`, return
 * `{ text }`. Every failure is a `TranscribeVideoError` whose message is
 * written for the model, which sees it in the tool result and can recover
 * (pick another asset, ask the user).
 */
import { maxRequestBodyBytes, TranscribeVideo } from "@switchboard/domain"
import type { AgentContext, MediaAsset, ToolDefinition } from "@switchboard/domain"
import { Data, Effect } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { MediaTranscriber, MediaUpload } from "../api/MediaTranscriber.ts"

export type TranscribeVideoErrorReason =
  | "NoContext"
  | "AssetNotFound"
  | "NoVideoAsset"
  | "NotTranscribable"
  | "UnsupportedUri"
  | "TooLarge"
  | "ReadFailed"
  | "UploadFailed"

export class TranscribeVideoError extends Data.TaggedError("TranscribeVideoError")<{
  readonly reason: TranscribeVideoErrorReason
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The server reads request bodies up to 10 MiB: fail before reading (and uploading) a file it
 * would refuse. The margin leaves room for the multipart envelope.
 */
export const defaultMaxBytes = maxRequestBodyBytes - 64 * 1024

export interface TranscribeVideoOptions {
  readonly maxBytes?: number
}

const fail = (reason: TranscribeVideoErrorReason, message: string, cause?: unknown) =>
  Effect.fail(new TranscribeVideoError({ reason, message, ...(cause === undefined ? {} : { cause }) }))

/** The asset to transcribe: by id when given, else the project's first video. */
export const resolveAsset = (
  context: AgentContext | null,
  assetId: string | undefined
): Effect.Effect<MediaAsset, TranscribeVideoError> => {
  if (context === null) {
    return fail("NoContext", "No project context: there are no media assets to transcribe")
  }
  if (assetId !== undefined) {
    const asset = context.mediaAssets.find((a) => a.id === assetId)
    if (asset === undefined) {
      const known = context.mediaAssets.map((a) => `"${a.id}"`).join(", ")
      return fail("AssetNotFound", `No media asset with id "${assetId}" (assets: ${known === "" ? "none" : known})`)
    }
    if (asset.kind === "image") {
      return fail("NotTranscribable", `Media asset "${assetId}" is an image: only video or audio can be transcribed`)
    }
    return Effect.succeed(asset)
  }
  const video = context.mediaAssets.find((a) => a.kind === "video")
  return video === undefined
    ? fail("NoVideoAsset", "The project has no video asset; pass assetId to transcribe an audio asset")
    : Effect.succeed(video)
}

const mediaTypes: Record<string, string> = {
  ".mp4": "video/mp4",
  ".m4v": "video/mp4",
  ".mov": "video/quicktime",
  ".webm": "video/webm",
  ".mkv": "video/x-matroska",
  ".avi": "video/x-msvideo",
  ".mpeg": "video/mpeg",
  ".mpg": "video/mpeg",
  ".mp3": "audio/mpeg",
  ".mpga": "audio/mpeg",
  ".m4a": "audio/mp4",
  ".wav": "audio/wav",
  ".ogg": "audio/ogg",
  ".oga": "audio/ogg",
  ".flac": "audio/flac",
  ".aac": "audio/aac"
}

const mediaTypeOf = (fileName: string): string =>
  mediaTypes[path.extname(fileName).toLowerCase()] ?? "application/octet-stream"

/** A file name with an extension when we can find one: providers detect the format from it. */
const fileNameOf = (asset: MediaAsset, fromUri: string): string => {
  const base = path.basename(fromUri)
  if (base !== "" && path.extname(base) !== "") return base
  return asset.name !== "" ? asset.name : asset.id
}

type AssetBytes = Omit<MediaUpload, "language">

const tooLarge = (asset: MediaAsset, size: number, maxBytes: number) =>
  fail(
    "TooLarge",
    `Media asset "${asset.id}" is ${(size / 1024 / 1024).toFixed(1)} MiB; at most ${
      (maxBytes / 1024 / 1024).toFixed(0)
    } MiB can be transcribed`
  )

const readLocal = (asset: MediaAsset, file: string, maxBytes: number): Effect.Effect<AssetBytes, TranscribeVideoError> =>
  Effect.gen(function*() {
    const readFailed = (cause: unknown) =>
      new TranscribeVideoError({
        reason: "ReadFailed",
        message: `Cannot read media asset "${asset.id}" at ${file}: ${cause instanceof Error ? cause.message : String(cause)}`,
        cause
      })
    const stat = yield* Effect.tryPromise({ try: () => fs.stat(file), catch: readFailed })
    if (stat.size > maxBytes) return yield* tooLarge(asset, stat.size, maxBytes)
    const data = yield* Effect.tryPromise({ try: () => fs.readFile(file), catch: readFailed })
    const fileName = fileNameOf(asset, file)
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), fileName, mediaType: mediaTypeOf(fileName) }
  })

const readRemote = (asset: MediaAsset, url: URL, maxBytes: number): Effect.Effect<AssetBytes, TranscribeVideoError> =>
  Effect.gen(function*() {
    const readFailed = (cause: unknown) =>
      new TranscribeVideoError({
        reason: "ReadFailed",
        message: `Cannot download media asset "${asset.id}" from ${url.href}: ${
          cause instanceof Error ? cause.message : String(cause)
        }`,
        cause
      })
    const response = yield* Effect.tryPromise({
      try: async (signal) => {
        const res = await fetch(url, { signal })
        if (!res.ok) throw new Error(`HTTP ${res.status}`)
        return res
      },
      catch: readFailed
    })
    const declared = Number(response.headers.get("content-length") ?? Number.NaN)
    if (Number.isFinite(declared) && declared > maxBytes) return yield* tooLarge(asset, declared, maxBytes)
    const body = yield* Effect.tryPromise({ try: () => response.arrayBuffer(), catch: readFailed })
    if (body.byteLength > maxBytes) return yield* tooLarge(asset, body.byteLength, maxBytes)
    const fileName = fileNameOf(asset, decodeURIComponent(url.pathname))
    const headerType = response.headers.get("content-type")?.split(";")[0]?.trim()
    const mediaType = headerType !== undefined && headerType !== "" && headerType !== "application/octet-stream"
      ? headerType
      : mediaTypeOf(fileName)
    return { data: new Uint8Array(body), fileName, mediaType }
  })

/** The asset's bytes, from `file://`, `http(s)://` or a plain local path. */
export const readAsset = (asset: MediaAsset, maxBytes: number = defaultMaxBytes): Effect.Effect<AssetBytes, TranscribeVideoError> => {
  const uri = asset.uri
  // A scheme is at least two letters, so a Windows drive ("C:\…") is read as a path.
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(uri)?.[1]?.toLowerCase()
  if (scheme === undefined) return readLocal(asset, path.resolve(uri), maxBytes)
  if (scheme === "file") {
    return Effect.try({
      try: () => fileURLToPath(uri),
      catch: (cause) => new TranscribeVideoError({ reason: "UnsupportedUri", message: `Invalid file URL for media asset "${asset.id}": ${uri}`, cause })
    }).pipe(Effect.flatMap((file) => readLocal(asset, file, maxBytes)))
  }
  if (scheme === "http" || scheme === "https") {
    return Effect.try({
      try: () => new URL(uri),
      catch: (cause) => new TranscribeVideoError({ reason: "UnsupportedUri", message: `Invalid URL for media asset "${asset.id}": ${uri}`, cause })
    }).pipe(Effect.flatMap((url) => readRemote(asset, url, maxBytes)))
  }
  return fail("UnsupportedUri", `Media asset "${asset.id}" has an unsupported URI scheme "${scheme}:" (use file://, http(s):// or a path)`)
}

export const makeTranscribeVideo = (
  transcriber: typeof MediaTranscriber.Service,
  options: TranscribeVideoOptions = {}
): ToolDefinition => ({
  ...TranscribeVideo,
  execute: (args, { agentContext }) =>
    Effect.gen(function*() {
      // Arguments were validated against the schema before execute: present ones are strings.
      const assetId = typeof args["assetId"] === "string" ? args["assetId"] : undefined
      const language = typeof args["language"] === "string" ? args["language"] : undefined
      const asset = yield* resolveAsset(agentContext, assetId)
      const bytes = yield* readAsset(asset, options.maxBytes ?? defaultMaxBytes)
      const text = yield* transcriber.transcribe({ ...bytes, ...(language === undefined ? {} : { language }) }).pipe(
        Effect.mapError((cause) => new TranscribeVideoError({ reason: "UploadFailed", message: cause.message, cause }))
      )
      return { text }
    }).pipe(Effect.withSpan("transcribe_video"))
})
