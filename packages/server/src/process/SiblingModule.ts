/**
 * The URL of a module beside the caller's, for a worker thread or a child
 * process to load: the caller's own extension, so `.ts` when the server runs
 * from its sources (tests, type stripping) and `.js` when it runs from the
 * build (`npm start`, `dist/`), where no `.ts` file exists.
 */
export const siblingModule = (callerUrl: string, name: string): URL =>
  new URL(`./${name}${callerUrl.endsWith(".ts") ? ".ts" : ".js"}`, callerUrl)
