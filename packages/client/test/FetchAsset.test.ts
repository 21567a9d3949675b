/**
 * The browser's `transcribe_video` reader: a picked file (`blob:`), inline bytes (`data:`) and
 * remote URLs are read by fetch; a local path is refused with a sentence the model can act on.
 */
import { assert, describe, it } from "@effect/vitest"
import type { AgentContext, MediaAsset } from "@switchboard/domain"
import { Effect } from "effect"
import { makeTranscribeVideo, fetchAsset, TranscribeVideoError } from "../src/tools/TranscribeVideo.ts"
import { recordingTranscriber } from "./support/Fakes.ts"

const contextOf = (...mediaAssets: Array<MediaAsset>): AgentContext => ({
  projectId: "p",
  activeSceneId: null,
  mediaAssets,
  playbackTimeMs: 0
})

describe("fetchAsset", () => {
  it.effect("a picked file (blob:) uploads under the asset's name with its type from the name", () =>
    Effect.gen(function*() {
      const url = URL.createObjectURL(new Blob([Uint8Array.from([1, 2, 3])]))
      const { transcriber, uploads } = recordingTranscriber()
      const result = yield* makeTranscribeVideo(transcriber).execute({}, {
        agentContext: contextOf({ id: "v1", name: "holiday.webm", kind: "video", uri: url })
      })
      URL.revokeObjectURL(url)
      assert.deepStrictEqual(result, { text: "Hello from the video" })
      assert.strictEqual(uploads.length, 1)
      assert.deepStrictEqual([...uploads[0]!.data], [1, 2, 3])
      assert.strictEqual(uploads[0]!.fileName, "holiday.webm")
      assert.strictEqual(uploads[0]!.mediaType, "video/webm")
    }))

  it.effect("data: URIs are read, and their declared type is kept", () =>
    Effect.gen(function*() {
      const bytes = yield* fetchAsset({ id: "a", name: "voice.mp3", kind: "audio", uri: "data:audio/wav;base64,AAEC" }, 1024)
      assert.deepStrictEqual([...bytes.data], [0, 1, 2])
      assert.strictEqual(bytes.fileName, "voice.mp3")
      assert.strictEqual(bytes.mediaType, "audio/wav")
    }))

  it.effect("local paths, file:// and unknown schemes are refused before any upload; oversized bytes too", () =>
    Effect.gen(function*() {
      const reasonOf = (uri: string, maxBytes = 1024) =>
        fetchAsset({ id: "v", name: "v.mp4", kind: "video", uri }, maxBytes).pipe(
          Effect.flip,
          Effect.map((e: TranscribeVideoError) => [e.reason, e.message] as const)
        )
      const [path, pathMessage] = yield* reasonOf("/home/me/clip.mp4")
      assert.strictEqual(path, "UnsupportedUri")
      assert.include(pathMessage, "local file")
      assert.strictEqual((yield* reasonOf("file:///home/me/clip.mp4"))[0], "UnsupportedUri")
      assert.strictEqual((yield* reasonOf("s3://bucket/clip.mp4"))[0], "UnsupportedUri")
      assert.strictEqual((yield* reasonOf("data:video/mp4;base64,AAECAwQF", 3))[0], "TooLarge")
    }))
})
