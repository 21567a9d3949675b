/**
 * `@switchboard/server/testing`, the helpers other packages' tests use: the
 * server in process (TestServer.ts, ControlPlane.ts) or as a built process
 * (ServerProcess.ts), its test database, signed tokens (ProductAuth.ts), fake
 * sub-agents, a fake MCP server and the jobs helpers. The server's own tests import the modules.
 */
export * from "./ControlPlane.ts"
export * from "./FakeMcp.ts"
export * from "./FakeSubagents.ts"
export * from "./JobsHelpers.ts"
export * from "./ProductAuth.ts"
export * from "./ServerProcess.ts"
export * from "./TestDatabase.ts"
export * from "./TestServer.ts"
