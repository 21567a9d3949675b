/**
 * The Switchboard client, browser-safe: the orchestrator (the tool-call loop
 * with argument validation, per-tool recovery and the cap of 8, its answers
 * streamed in), the streamed turn's reader and fold, the chat,
 * agent and jobs stores over a storage port, the tool registry, the typed API
 * client and its errors, its credentials (a fixed token, or `getToken` asked
 * before every request; `user` for a backend holding CHAT_TOKEN), job
 * watching, and the promise `run()` for programs
 * that do not write Effect. No Node built-in: it runs in a browser as it does
 * in the terminal (`@switchboard/cli`) or a Node program.
 */
export * from "./api/ApiClient.ts"
export * from "./api/ApiFailure.ts"
export * from "./api/MediaTranscriber.ts"
export * from "./api/Pages.ts"
export * from "./api/SseReader.ts"
export * from "./chat/AgentToolsMissing.ts"
export * from "./chat/ChatTransport.ts"
export * from "./chat/Orchestrator.ts"
export * from "./chat/Run.ts"
export * from "./chat/TurnChunks.ts"
export * from "./jobs/JobsStore.ts"
export * from "./jobs/JobWatch.ts"
export * from "./stores/AgentStore.ts"
export * from "./stores/ChatStore.ts"
export * from "./stores/Ids.ts"
export * from "./stores/StateStorage.ts"
export * from "./tools/DefaultRegistry.ts"
export * from "./tools/ToolRegistry.ts"
export * from "./tools/TranscribeVideo.ts"
export * from "./tools/ValidateToolCall.ts"
