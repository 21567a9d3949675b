import type { AgentContext, MediaAsset } from "@switchboard/domain"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { ApiClient, makeDefaultRegistry, makeTranscribeVideo, MediaTranscriber, resolveAsset, TranscribeVideoError } from "@switchboard/client"
import { formDataOf, recordingTranscriber, startFakeServer, tempDir } from "@switchboard/client/testing"
import type { RecordedRequest } from "@switchboard/client/testing"
import { readAssetFromDisk } from "../src/tools/FileAssets.ts"

// The tool as the terminal runs it: assets read from disk.
const fromDisk = { readAsset: readAssetFromDisk }

const videoBytes = Uint8Array.from({ length: 4096 }, (_, i) => (i * 31 + 7) % 256)

const writeClip = (name = "clip.mp4", bytes: Uint8Array = videoBytes) => {
  const file = path.join(tempDir(), name)
  fs.writeFileSync(file, bytes)
  return file
}

const contextOf = (...mediaAssets: ReadonlyArray<MediaAsset>): AgentContext => ({
  projectId: "proj_1",
  activeSceneId: null,
  mediaAssets,
  playbackTimeMs: 0
})

/** The transcriber over the typed client, against `baseUrl`. */
const transcriberAt = (baseUrl: string, token?: string) =>
  Effect.gen(function*() {
    return yield* MediaTranscriber
  }).pipe(
    Effect.provide(MediaTranscriber.layerNoDeps.pipe(Layer.provide(ApiClient.layer({ baseUrl, token }))))
  )

const transcriptionEndpoint = (request: RecordedRequest) =>
  request.method === "POST" && request.path === "/api/media/transcriptions"
    ? { json: { text: "hello from the server" } }
    : { status: 404, json: { error: "not found", code: "not_found" } }

describe("transcribe_video", () => {
  it.effect("uploads the asset as multipart to /api/media/transcriptions and returns the text", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(transcriptionEndpoint)
      const transcriber = yield* transcriberAt(server.url, "secret-token")
      const tool = makeDefaultRegistry(transcriber, fromDisk).get("transcribe_video")
      assert.isDefined(tool)
      const file = writeClip()
      const context = contextOf(
        { id: "img_1", name: "Poster", kind: "image", uri: "/nowhere.png" },
        { id: "vid_1", name: "Clip", kind: "video", uri: pathToFileURL(file).href }
      )

      const result = yield* tool!.execute({ language: "en" }, { agentContext: context })

      assert.deepStrictEqual(result, { text: "hello from the server" })
      assert.strictEqual(server.requests.length, 1)
      const request = server.requests[0]!
      assert.match(String(request.headers["content-type"]), /^multipart\/form-data; boundary=/)
      assert.strictEqual(request.headers.authorization, "Bearer secret-token")
      const form = yield* Effect.promise(() => formDataOf(request))
      const uploaded = form.get("file")
      assert.instanceOf(uploaded, File)
      const received = new Uint8Array(yield* Effect.promise(() => (uploaded as File).arrayBuffer()))
      assert.deepStrictEqual([...received], [...videoBytes])
      assert.strictEqual((uploaded as File).name, "clip.mp4")
      assert.strictEqual((uploaded as File).type, "video/mp4")
      assert.strictEqual(form.get("language"), "en")
    }))

  it.effect("picks the asset by id, reads plain paths, and sends no language unless asked", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(transcriptionEndpoint)
      const transcriber = yield* transcriberAt(server.url)
      const audio = writeClip("voice.m4a", Uint8Array.from([1, 2, 3]))
      const context = contextOf(
        { id: "vid_1", name: "Clip", kind: "video", uri: writeClip() },
        { id: "aud_1", name: "Voice", kind: "audio", uri: audio }
      )
      yield* makeTranscribeVideo(transcriber, fromDisk).execute({ assetId: "aud_1" }, { agentContext: context })
      const request = server.requests[0]!
      assert.isUndefined(request.headers.authorization)
      const form = yield* Effect.promise(() => formDataOf(request))
      const uploaded = form.get("file") as File
      assert.strictEqual(uploaded.name, "voice.m4a")
      assert.strictEqual(uploaded.type, "audio/mp4")
      assert.deepStrictEqual([...new Uint8Array(yield* Effect.promise(() => uploaded.arrayBuffer()))], [1, 2, 3])
      assert.isNull(form.get("language"))
    }))

  it.effect("downloads http(s) assets before uploading them", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer((request) =>
        request.method === "GET" && request.path === "/media/remote.webm"
          ? { body: videoBytes, headers: { "content-type": "video/webm" } }
          : transcriptionEndpoint(request)
      )
      const transcriber = yield* transcriberAt(server.url)
      const context = contextOf({ id: "vid_r", name: "Remote", kind: "video", uri: `${server.url}/media/remote.webm` })
      const result = yield* makeTranscribeVideo(transcriber, fromDisk).execute({}, { agentContext: context })
      assert.deepStrictEqual(result, { text: "hello from the server" })
      const upload = server.requests.find((r) => r.method === "POST")!
      const uploaded = (yield* Effect.promise(() => formDataOf(upload))).get("file") as File
      assert.strictEqual(uploaded.name, "remote.webm")
      assert.strictEqual(uploaded.type, "video/webm")
      assert.strictEqual(uploaded.size, videoBytes.length)
    }))

  it.effect("a server error becomes an UploadFailed error naming the server's sentence", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(() => ({
        status: 502,
        json: { error: "LLM provider error", code: "provider_error" }
      }))
      const transcriber = yield* transcriberAt(server.url)
      const context = contextOf({ id: "vid_1", name: "Clip", kind: "video", uri: writeClip() })
      const error = yield* makeTranscribeVideo(transcriber, fromDisk).execute({}, { agentContext: context }).pipe(Effect.flip)
      assert.instanceOf(error, TranscribeVideoError)
      assert.strictEqual((error as TranscribeVideoError).reason, "UploadFailed")
      assert.include((error as TranscribeVideoError).message, "LLM provider error")
    }))

  it.effect("a 413 from the HTTP layer (declared on every body route) reads as payload_too_large", () =>
    Effect.gen(function*() {
      const server = yield* startFakeServer(() => ({
        status: 413,
        json: { error: "Request body exceeds 10 MiB", code: "payload_too_large" }
      }))
      const transcriber = yield* transcriberAt(server.url)
      const error = yield* transcriber.transcribe({ data: videoBytes, fileName: "a.mp4", mediaType: "video/mp4" }).pipe(
        Effect.flip
      )
      assert.strictEqual(error.status, 413)
      assert.strictEqual(error.code, "payload_too_large")
      assert.include(error.message, "Request body exceeds 10 MiB")
    }))
})

describe("asset resolution", () => {
  const reasonOf = <A>(effect: Effect.Effect<A, TranscribeVideoError>) =>
    effect.pipe(Effect.flip, Effect.map((e) => [e.reason, e.message] as const))

  it.effect("no context, unknown id, an image, no video", () =>
    Effect.gen(function*() {
      const image: MediaAsset = { id: "img_1", name: "Poster", kind: "image", uri: "/p.png" }
      const audio: MediaAsset = { id: "aud_1", name: "Voice", kind: "audio", uri: "/v.m4a" }

      const [noContext] = yield* reasonOf(resolveAsset(null, undefined))
      assert.strictEqual(noContext, "NoContext")

      const [unknown, unknownMessage] = yield* reasonOf(resolveAsset(contextOf(image, audio), "vid_9"))
      assert.strictEqual(unknown, "AssetNotFound")
      assert.include(unknownMessage, `"vid_9"`)
      assert.include(unknownMessage, `"img_1"`)

      const [notTranscribable] = yield* reasonOf(resolveAsset(contextOf(image), "img_1"))
      assert.strictEqual(notTranscribable, "NotTranscribable")

      const [noVideo, noVideoMessage] = yield* reasonOf(resolveAsset(contextOf(image, audio), undefined))
      assert.strictEqual(noVideo, "NoVideoAsset")
      assert.include(noVideoMessage, "no video asset")

      // audio is fine when named
      assert.strictEqual((yield* resolveAsset(contextOf(image, audio), "aud_1")).id, "aud_1")
    }))

  it.effect("unreadable, unsupported and oversized assets fail before any upload", () =>
    Effect.gen(function*() {
      const { transcriber, uploads } = recordingTranscriber()
      const tool = makeTranscribeVideo(transcriber, { ...fromDisk, maxBytes: 1024 })
      const run = (asset: MediaAsset) =>
        tool.execute({}, { agentContext: contextOf(asset) }).pipe(
          Effect.flip,
          Effect.map((e) => (e as TranscribeVideoError).reason)
        )
      assert.strictEqual(yield* run({ id: "v", name: "v", kind: "video", uri: "/definitely/missing.mp4" }), "ReadFailed")
      assert.strictEqual(yield* run({ id: "v", name: "v", kind: "video", uri: "s3://bucket/clip.mp4" }), "UnsupportedUri")
      assert.strictEqual(yield* run({ id: "v", name: "v", kind: "video", uri: writeClip() }), "TooLarge")
      assert.strictEqual(uploads.length, 0)
      // within the limit it uploads
      const small = yield* readAssetFromDisk({ id: "v", name: "v", kind: "video", uri: writeClip("s.mov", Uint8Array.from([9])) }, 1024)
      assert.deepStrictEqual([...small.data], [9])
      assert.strictEqual(small.mediaType, "video/quicktime")
    }))
})
