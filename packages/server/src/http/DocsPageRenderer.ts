/**
 * Child process of `ApiDocs.ts`: renders the Scalar docs page of the domain's
 * `Api`, compresses it, sends the compressed bodies to the server over IPC
 * and exits — Scalar's bundle and the renderer's heap never enter the
 * server's own memory.
 */
import { Api } from "@switchboard/domain"
import { Effect } from "effect"
import { compress, scalarHtml } from "./ApiDocs.ts"

const html = await Effect.runPromise(scalarHtml(Api))
// The server may have stopped meanwhile (a test's server shut down as the page was rendered): then
// there is no channel left to close, and nothing to say.
process.on("error", () => process.exit(0))
process.send?.(compress(html, "text/html; charset=utf-8"), undefined, {}, () => {
  if (process.connected) process.disconnect()
})
