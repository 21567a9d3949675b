/**
 * The planner's set-up, shared by the planner case (`planner-cases.ts`) and the scale case's background part
 * (`background.ts`): an active provider profile, hosts with a claimed task each, and the body of
 * each host's decision (one `finish` tool; the fake's planner models call it).
 */

/** An admin (or host) call: the answer's JSON, or an error naming the route and what it answered. */
export const apiCall = async (origin: string, token: string | undefined, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status}: ${text.slice(0, 300)}`)
  return (text === "" ? {} : JSON.parse(text)) as Record<string, unknown>
}

/** `f` over `items`, `concurrency` at a time. */
export const withConcurrency = async <A>(items: ReadonlyArray<A>, concurrency: number, f: (item: A, index: number) => Promise<void>) => {
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) {
      const index = next++
      await f(items[index]!, index)
    }
  }))
}

/** A new provider profile of `model` at the fake, made the active one. */
export const activeProfile = async (origin: string, adminToken: string, fakePort: number, model: string) => {
  const profile = await apiCall(origin, adminToken, "POST", "/admin/provider-profiles", {
    name: `bench-${model}-${Math.random().toString(36).slice(2, 10)}`,
    provider: "openai-compatible",
    model,
    timeoutMs: 30_000,
    baseUrl: `http://127.0.0.1:${fakePort}/v1`,
    apiKey: "bench-key"
  })
  await apiCall(origin, adminToken, "POST", `/admin/provider-profiles/${String(profile["profileId"])}/activate`)
}

export interface ReadyHost {
  readonly hostId: string
  readonly token: string
  readonly taskId: string
  /** Its decision's request body. */
  readonly body: string
}

/** `n` hosts (`concurrency` set up at a time), each with a task of its own it has claimed. */
export const readyHosts = async (origin: string, adminToken: string, n: number, concurrency = 1, prefix = "bench-host") => {
  const hosts: Array<ReadyHost> = []
  await withConcurrency(Array.from({ length: n }, (_, i) => i), concurrency, async (i) => {
    const host = await apiCall(origin, adminToken, "POST", "/admin/hosts", { name: `${prefix}-${i}` })
    const hostId = String(host["hostId"])
    const token = String(host["token"])
    const task = await apiCall(origin, adminToken, "POST", "/admin/tasks", { goal: "benchmark", hostId })
    await apiCall(origin, token, "POST", `/internal/hosts/${hostId}/claim`)
    const taskId = String(task["taskId"])
    hosts[i] = {
      hostId,
      token,
      taskId,
      body: JSON.stringify({
        hostId,
        taskId,
        attempt: 1,
        systemPrompt: "You carry out tasks. Call exactly one tool.",
        userPrompt: "Task: benchmark. If it is done, call finish.",
        tools: [{ name: "finish", description: "The task is done", parameters: { type: "object", properties: {} } }]
      })
    }
  })
  return hosts
}
