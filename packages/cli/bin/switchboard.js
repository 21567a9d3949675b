#!/usr/bin/env node
// The package's executable. Node >= 22.18 runs the TypeScript sources directly (type stripping),
// so there is no build step between a change and `npx switchboard`.
import "../src/bin.ts"
