/**
 * The JSON log (`LOG_FORMAT=json`), batched: lines are formatted as they are
 * logged (still one JSON object per line, same fields as `Logger.consoleJson`)
 * but written together, once per `window`, in a single write. The access log
 * writes one line per HTTP request; written one by one, to a file or a pipe,
 * that is one system call per request on the request's own path (measured
 * with `npm run bench`: about a fifth of the chat route's CPU).
 *
 * The window starts with the first line into an empty buffer, on a timer of
 * its own: an idle server has no timer at all (Effect's `Logger.batched` wakes
 * a fiber every window whether or not anything was logged, which was most of
 * an idle replica's CPU). What is buffered is flushed when the logger's scope
 * closes (the server shutting down, on a signal or a fatal error). Only a
 * process killed outright (SIGKILL, out of memory) loses the last `window` of
 * lines.
 */
import { Duration, Effect, Logger } from "effect"

export const DEFAULT_WINDOW = Duration.millis(50)

/** A scoped JSON logger writing each batch with `write` (default: stdout). */
export const batchedJsonLogger = (options: {
  readonly write?: (chunk: string) => void
  readonly window?: Duration.Input
} = {}) =>
  Effect.gen(function*() {
    const write = options.write ?? ((chunk: string) => void process.stdout.write(chunk))
    const windowMs = Duration.toMillis(options.window ?? DEFAULT_WINDOW)
    let lines: Array<string> = []
    let timer: ReturnType<typeof setTimeout> | undefined
    const flush = () => {
      timer = undefined
      if (lines.length === 0) return
      const batch = lines
      lines = []
      try {
        write(`${batch.join("\n")}\n`)
      } catch {
        // In a timer's callback a throw would end the process: a log whose destination fails loses
        // its lines, not the server (an asynchronous failure of stdout is the stream's own event).
      }
    }
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (timer !== undefined) clearTimeout(timer)
        flush()
      })
    )
    return Logger.make((entry) => {
      lines.push(Logger.formatJson.log(entry))
      timer ??= setTimeout(flush, windowMs)
    })
  })
