/**
 * `transcribe_video`, the one client-side tool of this phase. Its schema is the
 * domain's `TranscribeVideo`, so the parameters the server offers the model
 * are exactly the ones validated and executed here.
 *
 * Execution: pick the asset from the AgentContext (`assetId`, else the first
 * video asset), read its bytes through a `ReadAsset` port, upload them through
 * `MediaTranscriber`, return `{ text }`. The default reader fetches what a
 * browser can (`http(s):`, `blob:` — a file the user picked — and `data:`); the
 * terminal's reader adds local paths and `file://` (the CLI's FileAssets).
 * Every failure is a `TranscribeVideoError` whose message is written for the
 * model, which sees it in the tool result and can recover (pick another asset,
 * ask the user).
 */
import { AgentContext, maxRequestBodyBytes, TranscribeVideo } from "@switchboard/domain"
import type { JsonObject, MediaAsset, ToolDefinition } from "@switchboard/domain"
import { Data, Effect, Option, Schema } from "effect"
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

/** An asset's bytes, ready to upload. */
export type AssetBytes = Omit<MediaUpload, "language">

/** Reads an asset's bytes, refusing more than `maxBytes` before reading them where it can. */
export type ReadAsset = (asset: MediaAsset, maxBytes: number) => Effect.Effect<AssetBytes, TranscribeVideoError>

export interface TranscribeVideoOptions {
  readonly maxBytes?: number
  /** Where the bytes come from; default `fetchAsset`. */
  readonly readAsset?: ReadAsset
}

const fail = (reason: TranscribeVideoErrorReason, message: string, cause?: unknown) =>
  Effect.fail(new TranscribeVideoError({ reason, message, ...(cause === undefined ? {} : { cause }) }))

const decodeProject = Schema.decodeUnknownOption(AgentContext)

/** The turn's context as the media editor's project (the tool is that agent's: another's context has no assets). */
const projectOf = (context: JsonObject): Effect.Effect<AgentContext, TranscribeVideoError> =>
  Option.match(decodeProject(context), {
    onNone: () => fail("NoContext", "The turn's context is not a media project (an AgentContext): there are no media assets to transcribe"),
    onSome: Effect.succeed
  })

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

/** The last segment of a `/`- or `\\`-separated path. */
const baseName = (pathName: string): string => pathName.split(/[\\/]/).at(-1) ?? ""

/** `.mp4` of `clip.mp4`; "" without an extension (a leading dot names a hidden file, not an extension). */
const extension = (fileName: string): string => {
  const dot = fileName.lastIndexOf(".")
  return dot > 0 ? fileName.slice(dot) : ""
}

export const mediaTypeOf = (fileName: string): string =>
  mediaTypes[extension(baseName(fileName)).toLowerCase()] ?? "application/octet-stream"

/** A file name with an extension when we can find one: providers detect the format from it. */
export const fileNameOf = (asset: MediaAsset, fromPath: string): string => {
  const base = baseName(fromPath)
  if (base !== "" && extension(base) !== "") return base
  return asset.name !== "" ? asset.name : asset.id
}

export const tooLarge = (asset: MediaAsset, size: number, maxBytes: number) =>
  fail(
    "TooLarge",
    `Media asset "${asset.id}" is ${(size / 1024 / 1024).toFixed(1)} MiB; at most ${
      (maxBytes / 1024 / 1024).toFixed(0)
    } MiB can be transcribed`
  )

const fetchUrl = (asset: MediaAsset, url: URL, maxBytes: number): Effect.Effect<AssetBytes, TranscribeVideoError> =>
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
    // A blob: URL's path is an opaque id and a data: URL's the data: the asset's name stands for the file's.
    const fileName = url.protocol === "http:" || url.protocol === "https:"
      ? fileNameOf(asset, decodeURIComponent(url.pathname))
      : fileNameOf(asset, asset.name)
    const headerType = response.headers.get("content-type")?.split(";")[0]?.trim()
    const mediaType = headerType !== undefined && headerType !== "" && headerType !== "application/octet-stream"
      ? headerType
      : mediaTypeOf(fileName)
    return { data: new Uint8Array(body), fileName, mediaType }
  })

/** The URI's scheme, lower-cased; none for a plain path. A scheme is at least two letters, so a Windows drive ("C:\\…") is a path. */
export const schemeOf = (uri: string): string | undefined => /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(uri)?.[1]?.toLowerCase()

/** The asset's bytes by `fetch`: `http(s):`, `blob:` (a file picked in a browser) and `data:` URIs. */
export const fetchAsset: ReadAsset = (asset, maxBytes) => {
  const uri = asset.uri
  const scheme = schemeOf(uri)
  if (scheme === "http" || scheme === "https" || scheme === "blob" || scheme === "data") {
    return Effect.try({
      try: () => new URL(uri),
      catch: (cause) => new TranscribeVideoError({ reason: "UnsupportedUri", message: `Invalid URL for media asset "${asset.id}": ${uri}`, cause })
    }).pipe(Effect.flatMap((url) => fetchUrl(asset, url, maxBytes)))
  }
  return fail(
    "UnsupportedUri",
    scheme === undefined || scheme === "file"
      ? `Media asset "${asset.id}" is a local file (${uri}), which this client cannot read: use http(s)://, blob: or data:`
      : `Media asset "${asset.id}" has an unsupported URI scheme "${scheme}:" (use http(s)://, blob: or data:)`
  )
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
      const asset = yield* resolveAsset(agentContext === null ? null : yield* projectOf(agentContext), assetId)
      const bytes = yield* (options.readAsset ?? fetchAsset)(asset, options.maxBytes ?? defaultMaxBytes)
      const text = yield* transcriber.transcribe({ ...bytes, ...(language === undefined ? {} : { language }) }).pipe(
        Effect.mapError((cause) => new TranscribeVideoError({ reason: "UploadFailed", message: cause.message, cause }))
      )
      return { text }
    }).pipe(Effect.withSpan("transcribe_video"))
})
