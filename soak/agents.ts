/**
 * What each phase's database gets before its load: the planner's provider profile (the soak's fake
 * provider), the shop chats' agent, whose MCP tool waits for the user's approval, and the office
 * chats' agent with its sub-agent kind of the soak's own, whose MCP call parks the job until the user
 * decides (soak/workload.ts runs both).
 */
import { OFFICE_AGENT, OFFICE_KIND, SHOP_AGENT } from "./workload.ts"

export const prepareDatabase = async (origin: string, adminToken: string, providerPort: number, mcpUrl: string) => {
  const call = async (path: string, body?: unknown) => {
    const response = await fetch(`${origin}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${text.slice(0, 200)}`)
    return JSON.parse(text || "{}") as Record<string, unknown>
  }
  const profile = await call("/admin/provider-profiles", {
    name: "soak-planner",
    provider: "openai-compatible",
    model: "soak-planner",
    timeoutMs: 5_000,
    baseUrl: `http://127.0.0.1:${providerPort}/v1`,
    apiKey: "soak-key"
  })
  await call(`/admin/provider-profiles/${String(profile["profileId"])}/activate`)
  const put = async (path: string, body: unknown) => {
    const answer = await fetch(`${origin}${path}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    if (!answer.ok) throw new Error(`PUT ${path}: ${answer.status} ${(await answer.text()).slice(0, 200)}`)
  }
  await put(`/admin/agents/${SHOP_AGENT}`, {
    systemPrompt: "A shop's support agent",
    mcpServers: [{ name: "shop", url: mcpUrl, requireApproval: ["refund"] }]
  })
  await put(`/admin/subagents/${OFFICE_KIND}`, {
    description: "Pay an office order out in the background, once the user allows it.",
    input: [{ key: "order", type: "string", required: true }],
    systemPrompt: "You pay office orders out with office__payout. The order: {{input.order}}",
    mcpServers: [{ name: "office", url: mcpUrl, tools: ["payout"], requireApproval: ["payout"] }],
    result: { type: "object", properties: { outcome: { type: "string" } }, required: ["outcome"] },
    maxSteps: 4
  })
  await put(`/admin/agents/${OFFICE_AGENT}`, { systemPrompt: "An office's back office", jobKinds: [OFFICE_KIND] })
}
