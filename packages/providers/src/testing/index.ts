/**
 * `@switchboard/providers/testing`, the fakes other packages' tests use: the
 * scripted adapter (`makeFakeProvider`), the OpenAI- and Anthropic-compatible
 * fake servers — each a namespace (`FakeOpenAi.scoped`, `FakeAnthropic.reply`),
 * since both name their parts alike — with their services and replies under
 * names of their own, and the fake HTTP server they stand on.
 */
export * from "./FakeHttp.ts"
export * from "./FakeProvider.ts"
export * as FakeAnthropic from "./FakeAnthropic.ts"
export { FakeAnthropicServer, reply as anthropicReply } from "./FakeAnthropic.ts"
export * as FakeOpenAi from "./FakeOpenAi.ts"
export { FakeOpenAiServer, reply as openAiReply } from "./FakeOpenAi.ts"
