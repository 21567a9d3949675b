/**
 * What the CLI package offers beside its `switchboard` command (`bin.ts`):
 * reading a media asset from disk for the client's `run()` in Node
 * (docs/chat.md, embedding the agent loop).
 */
export { readAssetFromDisk } from "./tools/FileAssets.ts"
