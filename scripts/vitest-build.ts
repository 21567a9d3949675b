// Vitest's global set-up: the tests that start the production server as a process run its build
// (`dist/`, scripts/build.ts), made once here before any test file runs.
import { build } from "./build.ts"

export default function setup() {
  build()
}
