/**
 * The worker thread that reduces one HTML page to text (`ReadableText`), so
 * that a page built to be slow to parse (deep nesting, huge tables) costs a
 * worker that is terminated at the time limit, never the server's event loop.
 * Input: the HTML as `workerData`; output: one `ReadablePage` message.
 */
import { parentPort, workerData } from "node:worker_threads"
import { readableText } from "./ReadableText.ts"

parentPort?.postMessage(readableText(String(workerData)))
