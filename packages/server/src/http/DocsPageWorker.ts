/**
 * Worker thread of `ApiDocs.ts`: renders the Scalar docs page of the domain's
 * `Api`, compresses it, posts the compressed bodies (their buffers moved, not
 * copied) and exits — taking Scalar's bundle out of memory with it.
 */
import { Api } from "@switchboard/domain"
import { Effect } from "effect"
import { parentPort } from "node:worker_threads"
import { compress, scalarHtml } from "./ApiDocs.ts"

const html = await Effect.runPromise(scalarHtml(Api))
const body = compress(html, "text/html; charset=utf-8")
parentPort?.postMessage(body, [body.gzip.buffer as ArrayBuffer, body.br.buffer as ArrayBuffer])
