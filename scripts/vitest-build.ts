// Vitest's global set-up: the tests that start the production server as a process run its build
// (`dist/`, scripts/build.ts), made once here before any test file runs; so do the console's
// browser tests (`dist/web`, rebuilt only when its sources changed).
import { build, buildWeb } from "./build.ts"

export default function setup() {
  build()
  buildWeb()
}
