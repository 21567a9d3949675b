/**
 * Files the user picked for the agent context's media assets (`<input type=file>`), kept in memory by
 * asset id, and the `ReadAsset` that gives `transcribe_video` their bytes. The page's policy
 * (`connect-src 'self'`) refuses a `fetch` of a `blob:` URL, so the tool reads the `File` itself.
 *
 * A picked file lives as long as the page: after a reload its asset is still in the context (the
 * agent store keeps it), marked by its `picked-file:` URI, and the tool asks for it to be picked again.
 */
import type { MediaAsset } from "@switchboard/domain"
import { fetchAsset, mediaTypeOf, TranscribeVideoError, tooLarge } from "@switchboard/client"
import type { ReadAsset } from "@switchboard/client"
import { Effect } from "effect"
import { createStore } from "zustand/vanilla"

/** The URI scheme of an asset whose bytes are a picked file. */
export const PICKED_SCHEME = "picked-file:"

export const pickedUri = (file: File): string => `${PICKED_SCHEME}${file.name || "file"}`

export const isPicked = (asset: MediaAsset): boolean => asset.uri.startsWith(PICKED_SCHEME)

/** Asset id → the file picked for it (this page only). */
export const pickedFiles = createStore<{ readonly files: ReadonlyMap<string, File> }>()(() => ({ files: new Map() }))

export const rememberFile = (assetId: string, file: File) =>
  pickedFiles.setState((state) => ({ files: new Map(state.files).set(assetId, file) }))

export const forgetFile = (assetId: string) =>
  pickedFiles.setState((state) => {
    const files = new Map(state.files)
    files.delete(assetId)
    return { files }
  })

/** A picked file's bytes; any other asset as the client reads it by default (`http(s):`, `data:`). */
export const readPickedAsset: ReadAsset = (asset, maxBytes) => {
  const file = pickedFiles.getState().files.get(asset.id)
  if (file === undefined) {
    return isPicked(asset)
      ? Effect.fail(new TranscribeVideoError({
        reason: "ReadFailed",
        message: `The file of media asset "${asset.id}" was picked on an earlier page: the user must pick it again`
      }))
      : fetchAsset(asset, maxBytes)
  }
  if (file.size > maxBytes) return tooLarge(asset, file.size, maxBytes)
  return Effect.tryPromise({
    try: () => file.arrayBuffer(),
    catch: (cause) =>
      new TranscribeVideoError({ reason: "ReadFailed", message: `Cannot read the picked file of media asset "${asset.id}"`, cause })
  }).pipe(Effect.map((buffer) => ({
    data: new Uint8Array(buffer),
    fileName: file.name || asset.name || asset.id,
    mediaType: file.type !== "" ? file.type : mediaTypeOf(file.name)
  })))
}
