/**
 * The Node the server needs. An older one (Node 20, a machine's own) fails
 * deep inside a dependency's import with a stack trace; `main.ts` asks here
 * first, with nothing loaded yet, and refuses in one line naming what to run.
 * No imports: this module must load on any Node.
 */

/** The oldest Node that runs the server (package.json's `engines`). */
export const minimumNode = { major: 22, minor: 19 } as const

/** Why `version` (as `process.versions.node`) cannot run the server; `undefined` when it can. */
export const tooOldNode = (version: string): string | undefined => {
  const [major = 0, minor = 0] = version.split(".").map((part) => Number.parseInt(part, 10) || 0)
  if (major > minimumNode.major || (major === minimumNode.major && minor >= minimumNode.minor)) return undefined
  return `Node ${version} is too old (Switchboard needs ${minimumNode.major}.${minimumNode.minor} or later: ` +
    "run the project's own, node_modules/.bin/node dist/server/src/main.js, as npm start does)"
}
