/**
 * Reads the transcription upload (multipart: `file`, optional `language`)
 * part by part, the file into memory — it goes to the provider whole anyway,
 * and the body is capped at 10 MiB — so no temporary file is ever written.
 *
 * Every part is consumed or refused as it arrives: the platform's buffered
 * reader skipped a file part with an empty filename without reading it, and
 * the request then hung with its socket open. The part count is bounded by
 * the parser (`TRANSCRIPTION_MAX_PARTS`), which fails on the first part too
 * many instead of after reading them all.
 */
import { InvalidRequest, TooManyParts, TRANSCRIPTION_MAX_PARTS, TranscriptionLanguage } from "@switchboard/domain"
import { Effect, Schema, Stream } from "effect"
import type { Multipart } from "effect/http"
import { describeSchemaError } from "../http/RequestErrors.ts"
import type { TranscriptionInput } from "@switchboard/providers"

const invalid = (what: string) => new InvalidRequest({ error: `Invalid request body: ${what}` })

const decodeLanguage = Schema.decodeUnknownEffect(TranscriptionLanguage)

/** A parser failure as the client's error: too many parts, malformed; size limits stay defects (413 upstream). */
const fromMultipartError = (error: Multipart.MultipartError): Effect.Effect<never, InvalidRequest | TooManyParts> =>
  error.reason._tag === "TooManyParts"
    ? Effect.fail(new TooManyParts({
      error: `Invalid request body: at most ${TRANSCRIPTION_MAX_PARTS} multipart parts (file, language)`,
      limit: TRANSCRIPTION_MAX_PARTS
    }))
    : error.reason._tag === "Parse"
    ? Effect.fail(invalid("not a well-formed multipart/form-data body"))
    : Effect.die(error)

interface Collected {
  file?: { readonly data: Uint8Array; readonly name: string; readonly contentType: string }
  language?: string
}

const takePart = (collected: Collected, part: Multipart.Part): Effect.Effect<Collected, InvalidRequest | Multipart.MultipartError> => {
  if (part._tag === "Field") {
    if (part.key === "file") return Effect.fail(invalid("file must be a file part (with a filename) at file"))
    if (part.key !== "language") return Effect.fail(invalid(`unexpected field "${part.key}" (the parts are file and language)`))
    if (collected.language !== undefined) return Effect.fail(invalid("language given twice at language"))
    return decodeLanguage(part.value).pipe(
      Effect.mapError((e) => invalid(`${describeSchemaError(e.message)} at language`)),
      Effect.map((language) => ({ ...collected, language }))
    )
  }
  const file = part as Multipart.File
  if (file.key !== "file") return Effect.fail(invalid(`unexpected file part "${file.key}" (the file goes in the part named file)`))
  if (collected.file !== undefined) return Effect.fail(invalid("more than one file at file"))
  if (file.name === "") return Effect.fail(invalid("the file part has an empty filename at file"))
  return file.contentEffect.pipe(
    Effect.map((data) => ({ ...collected, file: { data, name: file.name, contentType: file.contentType } }))
  )
}

export const readUpload = (parts: Stream.Stream<Multipart.Part, Multipart.MultipartError>) =>
  Stream.runFoldEffect(parts, (): Collected => ({}), takePart).pipe(
    Effect.catchTag("MultipartError", fromMultipartError),
    Effect.flatMap((collected): Effect.Effect<TranscriptionInput, InvalidRequest> => {
      if (collected.file === undefined) return Effect.fail(invalid("Missing key at file (a multipart part named file)"))
      if (collected.file.data.byteLength === 0) return Effect.fail(new InvalidRequest({ error: "Invalid request: file is empty" }))
      return Effect.succeed({
        data: collected.file.data,
        fileName: collected.file.name,
        mediaType: collected.file.contentType,
        ...(collected.language === undefined ? {} : { language: collected.language })
      })
    })
  )
