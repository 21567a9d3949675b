/**
 * The terminal's `transcribe_video` reader: a media asset's bytes from disk (a
 * local path, relative to the working directory, or a `file://` URL), and
 * everything else (`http(s)://`) as the client's `fetchAsset` reads it.
 */
import { fetchAsset, fileNameOf, mediaTypeOf, schemeOf, tooLarge, TranscribeVideoError } from "@switchboard/client"
import type { AssetBytes, ReadAsset } from "@switchboard/client"
import type { MediaAsset } from "@switchboard/domain"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const readFile = (asset: MediaAsset, file: string, maxBytes: number): Effect.Effect<AssetBytes, TranscribeVideoError> =>
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

/** The asset's bytes, from a plain local path, `file://` or — through `fetchAsset` — `http(s)://`. */
export const readAssetFromDisk: ReadAsset = (asset, maxBytes) => {
  const scheme = schemeOf(asset.uri)
  if (scheme === undefined) return readFile(asset, path.resolve(asset.uri), maxBytes)
  if (scheme === "file") {
    return Effect.try({
      try: () => fileURLToPath(asset.uri),
      catch: (cause) =>
        new TranscribeVideoError({ reason: "UnsupportedUri", message: `Invalid file URL for media asset "${asset.id}": ${asset.uri}`, cause })
    }).pipe(Effect.flatMap((file) => readFile(asset, file, maxBytes)))
  }
  if (scheme === "http" || scheme === "https") return fetchAsset(asset, maxBytes)
  return Effect.fail(
    new TranscribeVideoError({
      reason: "UnsupportedUri",
      message: `Media asset "${asset.id}" has an unsupported URI scheme "${scheme}:" (use file://, http(s):// or a path)`
    })
  )
}
