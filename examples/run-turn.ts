/**
 * One turn of the agent loop from a program that does not write Effect:
 * `run()` of `@switchboard/client` (README, "Embed the agent loop"). Against
 * the scripted demo server it asks for a transcription of `examples/clip.webm`,
 * and prints each message the turn added. The client reads assets by URL
 * (`http(s):`, `blob:`, `data:`: what a browser can); a Node program that
 * names local files passes the CLI's disk reader.
 *
 *   npx node examples/run-turn.ts [serverUrl]   # default $SWITCHBOARD_SERVER, else http://127.0.0.1:8787
 *
 * Run it from the repository root: the asset's `uri` is a path relative to the
 * working directory. `npx node` is the project's Node 22, which runs
 * TypeScript as it is.
 */
import { closeRunClients, run } from "@switchboard/client"
import { readAssetFromDisk } from "@switchboard/cli"

const serverUrl = process.argv[2] ?? process.env["SWITCHBOARD_SERVER"] ?? "http://127.0.0.1:8787"

const turn = await run(
  [{ role: "user", content: "Please transcribe my video" }], // the conversation so far, new message last
  {
    projectId: "demo",
    activeSceneId: null,
    playbackTimeMs: 0,
    mediaAssets: [{ id: "clip", name: "Clip", kind: "video", uri: "examples/clip.webm" }]
  },
  // token: the server's CHAT_TOKEN, when it has one; readAsset: local paths as media assets
  { serverUrl, token: process.env["CHAT_TOKEN"], readAsset: readAssetFromDisk }
)

for (const message of turn) {
  const calls = message.toolCalls?.map((call) => `${call.name}(${JSON.stringify(call.args)})`).join(", ")
  console.log(`${message.role}: ${message.content}${calls ? ` → ${calls}` : ""}`)
}
await closeRunClients()
