/**
 * The Switchboard client: stores, tool registry, orchestrator and the typed
 * API client, for programs that embed the agent session shell rather than
 * run the `switchboard` executable.
 */
export * from "./chat/ChatTransport.ts"
export * from "./chat/Orchestrator.ts"
export * from "./chat/Run.ts"
export * from "./api/ApiClient.ts"
export * from "./api/ApiFailure.ts"
export * from "./api/MediaTranscriber.ts"
export * from "./stores/AgentStore.ts"
export * from "./stores/ChatStore.ts"
export * from "./stores/StateStorage.ts"
export * from "./tools/DefaultRegistry.ts"
export * from "./tools/ToolRegistry.ts"
export * from "./tools/TranscribeVideo.ts"
export * from "./tools/ValidateToolCall.ts"
