/**
 * One turn with the `support` agent (examples/agents/support.yaml) from a
 * program: `run()` of `@switchboard/client` with `agent: "support"`, the
 * customer's id as the turn's context, and the agent's one client tool,
 * `lookup_order`, implemented here over a small in-memory order book. Before
 * the first request `run()` checks that every tool the agent declares is
 * implemented, so a program that forgot one fails at once, naming it.
 *
 *   npx node examples/agents/support-turn.ts [serverUrl] [message]
 *
 * Default server: $SWITCHBOARD_SERVER, else http://127.0.0.1:8787; default
 * message: "Where is my order A-1001?".
 */
import { closeRunClients, run } from "@switchboard/client"
import type { RunTool } from "@switchboard/client"

const serverUrl = process.argv[2] ?? process.env["SWITCHBOARD_SERVER"] ?? "http://127.0.0.1:8787"
const question = process.argv[3] ?? "Where is my order A-1001?"

/** The shop's orders, by customer: what a real program would ask its own backend for. */
const orders: Record<string, Record<string, { status: string; items: Array<string>; estimatedDelivery: string }>> = {
  "cust-42": {
    "A-1001": { status: "shipped", items: ["espresso machine"], estimatedDelivery: "2026-12-03" }
  }
}

const lookupOrder: RunTool = {
  name: "lookup_order",
  description: "The status, items and delivery estimate of one of the customer's orders.",
  parameters: [{ key: "orderId", type: "string", description: "The order's id, e.g. A-1001", required: true }],
  // The turn's context is the agent's own object ({ customerId }): a customer only sees their orders.
  execute: (args, { agentContext }) => {
    const customerId = String(agentContext?.["customerId"] ?? "")
    const order = orders[customerId]?.[String(args["orderId"])]
    if (order === undefined) throw new Error(`no order ${String(args["orderId"])} for customer ${customerId}`)
    return { orderId: args["orderId"], ...order }
  }
}

try {
  const turn = await run(
    [{ role: "user", content: question }],
    { customerId: "cust-42" },
    { serverUrl, token: process.env["CHAT_TOKEN"], agent: "support", tools: [lookupOrder] }
  )
  for (const message of turn) {
    const calls = message.toolCalls?.map((call) => `${call.name}(${JSON.stringify(call.args)})`).join(", ")
    console.log(`${message.role}: ${message.content}${calls ? ` → ${calls}` : ""}`)
  }
} catch (error) {
  console.error(`support-turn: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  await closeRunClients()
}
