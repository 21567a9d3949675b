/**
 * `@switchboard/client/testing`, the fakes other packages' tests use: the
 * scripted transport, stores and tools (Fakes.ts), the fake API server
 * (FakeServer.ts) and the streamed turns it plays (FakeStream.ts).
 */
export * from "./Fakes.ts"
export * from "./FakeServer.ts"
export * from "./FakeStream.ts"
