/**
 * The server tools port (chat/ServerTools.ts) with a made-up tool and no jobs
 * at all: a persisted turn offers the port's tools, executes the model's
 * calls to them through the port (never handing them to the client), stores
 * their results, and runs the port's SQL fragments inside its own statements
 * (the row that comes back to the tool also carries chat's own columns). With
 * no implementation provided, chat offers no server tools.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { ChatMessage, ProviderChatParams, ProviderChatResponse, ToolCall, ToolSchema } from "@switchboard/domain"
import { clientToolSchemas } from "@switchboard/domain"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { mediaEditorDefinition } from "../../src/agents/MediaEditor.ts"
import { ChatRepo } from "../../src/chat/ChatRepo.ts"
import { ServerTools } from "../../src/chat/ServerTools.ts"
import type { WrittenRow } from "../../src/chat/ServerTools.ts"
import { TurnComposer } from "../../src/chat/turn/TurnComposer.ts"
import { makeFakeProvider } from "@switchboard/providers/testing"
import { backend, TestDatabase } from "../support/TestDatabase.ts"
import { storedChatKey } from "../../src/users/ChatKey.ts"

const RollDice: ToolSchema = {
  name: "roll_dice",
  description: "Rolls a die on the server.",
  parameters: [{ key: "sides", type: "integer", required: true }]
}

const user = (id: string, content: string): ChatMessage => ({ id, role: "user", content, timestamp: 1 })

/** A made-up server tool: each roll is a row of `dice_rolls`, written by the statement that stores its result. */
const makeDice = () => {
  const executed: Array<ReadonlyArray<ToolCall>> = []
  const afterRound: Array<WrittenRow | undefined> = []
  const afterEnd: Array<WrittenRow | undefined> = []
  const layerTest = Layer.effect(ServerTools, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return ServerTools.of({
      offeredTo: () => Effect.succeed({ schemas: [RollDice], instructions: "Roll dice with roll_dice." }),
      handles: (name) => name === RollDice.name,
      execute: (turn, calls) =>
        Effect.sync(() => {
          executed.push(calls)
          const rolled = calls.map((call) => ({ call, value: 4 }))
          return {
            results: rolled.map(({ call, value }): ChatMessage => ({
              id: `result_${call.id}`,
              role: "tool",
              content: `rolled ${value}`,
              toolResult: { toolCallId: call.id, name: call.name, result: { value } },
              timestamp: 2
            })),
            dispatched: [],
            writes: {
              ctes: (when) =>
                rolled.map(({ call, value }, i) =>
                  sql`${sql.literal(`dice_${i}`)} AS (
                    INSERT INTO dice_rolls (chat_id, call_id, value) SELECT ${turn.chatId}, ${call.id}, ${value} WHERE ${when}
                  )`
                ),
              columns: [sql`${rolled.length} AS dice_rolled`],
              after: (row) => Effect.sync(() => void afterRound.push(row))
            }
          }
        }),
      turnEnded: () => ({
        ctes: () => [],
        columns: [sql`'ended' AS dice_turn`],
        after: (row) => Effect.sync(() => void afterEnd.push(row))
      })
    })
  }))
  return { layerTest, executed, afterRound, afterEnd }
}

/** The composer over the test's database and `fake`, with `tools` (or none). */
const buildComposer = <E, R>(fake: ReturnType<typeof makeFakeProvider>, tools: Layer.Layer<never, E, R>) =>
  Effect.gen(function*() {
    const services = yield* Layer.build(
      TurnComposer.layerNoDeps.pipe(Layer.provide(tools), Layer.provideMerge(ChatRepo.layer), Layer.provideMerge(fake.layer))
    )
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE IF NOT EXISTS dice_rolls (chat_id text NOT NULL, call_id text NOT NULL, value int NOT NULL)`
    return { composer: Context.get(services, TurnComposer), chats: Context.get(services, ChatRepo), sql }
  })

/** The model: rolls once when asked, then says what the roll was. */
const player = (params: ProviderChatParams): ProviderChatResponse => {
  const last = params.messages.at(-1)!
  if (last.role === "tool") return { content: `you rolled ${(last.toolResult?.result as { value: number }).value}` }
  return { content: "", toolCalls: [{ id: "call_dice", name: "roll_dice", args: { sides: 6 } }] }
}

describe(`the server tools port on ${backend} PostgreSQL`, () => {
  layer(TestDatabase, { excludeTestServices: true })("a persisted turn", (it) => {
    it.effect("a made-up server tool is offered, executed through the port, and its writes ride in chat's statements", () =>
      Effect.gen(function*() {
        const fake = makeFakeProvider()
        fake.answerWith((params) => Effect.succeed(player(params)))
        const dice = makeDice()
        const { chats, composer, sql } = yield* buildComposer(fake, dice.layerTest)

        const outcome = yield* composer.persisted({ chatId: storedChatKey("dice-1"), messages: [user("u1", "roll a die")], context: undefined, agent: mediaEditorDefinition })
        assert.strictEqual(outcome._tag, "Answered")
        if (outcome._tag !== "Answered") return
        assert.strictEqual(outcome.response.content, "you rolled 4")
        assert.isUndefined(outcome.response.toolCalls, "a server tool's call never reaches the client")

        // Offered beside the client's tools, the port's instructions in the system prompt.
        assert.strictEqual(fake.calls.length, 2)
        assert.deepStrictEqual(fake.calls[0]!.toolSchemas, [...clientToolSchemas, RollDice])
        assert.include(fake.calls[0]!.systemPrompt, "Roll dice with roll_dice.")
        // Executed through the port, once, with the model's call; its result is what the model read next.
        assert.deepStrictEqual(dice.executed, [[{ id: "call_dice", name: "roll_dice", args: { sides: 6 } }]])
        assert.deepStrictEqual(fake.calls[1]!.messages.at(-1)?.toolResult, { toolCallId: "call_dice", name: "roll_dice", result: { value: 4 } })

        const transcript = yield* chats.transcript(storedChatKey("dice-1"))
        assert.deepStrictEqual(transcript.map((m) => m.role), ["user", "assistant", "tool", "assistant"])
        assert.deepStrictEqual(transcript[1]!.toolCalls?.map((c) => c.name), ["roll_dice"])
        assert.strictEqual(transcript[2]!.id, "result_call_dice")

        // The tool's CTE wrote its row; its column came back in the row of the statement that renewed the
        // marker (`turn_id` is chat's own column there): one statement for the round.
        const rolls = yield* sql<{ chat_id: string; call_id: string; value: number }>`SELECT chat_id, call_id, value FROM dice_rolls`
        assert.deepStrictEqual(rolls.map((r) => ({ ...r })), [{ chat_id: "dice-1", call_id: "call_dice", value: 4 }])
        assert.strictEqual(dice.afterRound.length, 1)
        assert.strictEqual(Number(dice.afterRound[0]?.["dice_rolled"]), 1)
        assert.isString(dice.afterRound[0]?.["turn_id"])
        // The turn's end: the port's column in the row of the statement that stored the answer and released the marker.
        assert.strictEqual(dice.afterEnd.length, 1)
        assert.strictEqual(dice.afterEnd[0]?.["dice_turn"], "ended")
        assert.strictEqual(dice.afterEnd[0]?.["live"], true)
        const markers = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM chat_turns WHERE chat_id = 'dice-1'`
        assert.strictEqual(markers[0]!.n, 0, "the marker is released")
      }).pipe(Effect.scoped))

    it.effect("without an implementation, chat offers no server tools and every call is the client's", () =>
      Effect.gen(function*() {
        const fake = makeFakeProvider()
        fake.answerWith((params) => Effect.succeed(player(params)))
        const { chats, composer } = yield* buildComposer(fake, Layer.empty)

        const outcome = yield* composer.persisted({ chatId: storedChatKey("dice-2"), messages: [user("u1", "roll a die")], context: undefined, agent: mediaEditorDefinition })
        assert.strictEqual(outcome._tag, "Answered")
        if (outcome._tag !== "Answered") return
        assert.strictEqual(fake.calls.length, 1)
        assert.deepStrictEqual(fake.calls[0]!.toolSchemas, clientToolSchemas)
        assert.notInclude(fake.calls[0]!.systemPrompt, "roll_dice")
        assert.deepStrictEqual(outcome.response.toolCalls?.map((c) => c.name), ["roll_dice"])
        assert.isUndefined(outcome.response.jobs)
        assert.deepStrictEqual((yield* chats.transcript(storedChatKey("dice-2"))).map((m) => m.role), ["user", "assistant"])
      }).pipe(Effect.scoped))
  })
})
