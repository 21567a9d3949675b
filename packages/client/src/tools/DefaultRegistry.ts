/**
 * The registry the CLI runs with. Exactly one tool in this phase:
 * `transcribe_video` (`echo_context` must not be
 * registered). Adding a tool is adding its module and one `register` line —
 * and its schema to the domain's `clientToolSchemas`, which the server offers
 * to the model.
 */
import type { MediaTranscriber } from "../api/MediaTranscriber.ts"
import { makeTranscribeVideo } from "./TranscribeVideo.ts"
import type { TranscribeVideoOptions } from "./TranscribeVideo.ts"
import { ToolRegistry } from "./ToolRegistry.ts"

export const makeDefaultRegistry = (
  transcriber: typeof MediaTranscriber.Service,
  options: TranscribeVideoOptions = {}
): ToolRegistry => new ToolRegistry().register(makeTranscribeVideo(transcriber, options))
