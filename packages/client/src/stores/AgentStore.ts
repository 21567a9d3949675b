/**
 * `agentStore` (docs/chat.md, the client): what the agent is
 * doing right now — its execution status, the tool it is running — and the
 * project context it works in.
 *
 * Same pattern as `chatStore`. Only `context` is persisted: status and active
 * tool describe a running process, and restoring a stale "processing" after a
 * crash would be a lie.
 */
import { AgentContext } from "@switchboard/domain"
import type { ExecutionStatus } from "@switchboard/domain"
import { Schema } from "effect"
import { createJSONStorage, persist } from "zustand/middleware"
import type { StateStorage } from "zustand/middleware"
import { createStore } from "zustand/vanilla"
import type { StateCreator, StoreApi } from "zustand/vanilla"

export interface AgentState {
  readonly status: ExecutionStatus
  readonly activeTool: string | null
  readonly context: AgentContext | null
  readonly setStatus: (status: ExecutionStatus) => void
  readonly setActiveTool: (name: string | null) => void
  readonly setContext: (context: AgentContext | null) => void
  /** Back to rest: status `idle`, no active tool. The context is kept. */
  readonly reset: () => void
}

type PersistedAgent = Pick<AgentState, "context">

export const agentStoreName = "agent-store"

const decodeContext = Schema.decodeUnknownOption(Schema.NullOr(AgentContext))

const mergePersisted = (persisted: unknown, current: AgentState): AgentState => {
  if (typeof persisted !== "object" || persisted === null || !("context" in persisted)) return current
  const context = decodeContext(persisted.context)
  return context._tag === "Some" ? { ...current, context: context.value } : current
}

const agentState: StateCreator<AgentState> = (set) => ({
  status: "idle",
  activeTool: null,
  context: null,
  setStatus: (status) => set({ status }),
  setActiveTool: (name) => set({ activeTool: name }),
  setContext: (context) => set({ context }),
  reset: () => set({ status: "idle", activeTool: null })
})

export const makeAgentStore = (storage: StateStorage) =>
  createStore<AgentState>()(persist(agentState, {
    name: agentStoreName,
    version: 1,
    storage: createJSONStorage<PersistedAgent>(() => storage),
    partialize: (state): PersistedAgent => ({ context: state.context }),
    merge: mergePersisted
  }))

/** The same store, not persisted (see `makeTransientChatStore`). */
export const makeTransientAgentStore = (): StoreApi<AgentState> => createStore<AgentState>()(agentState)

export type AgentStore = ReturnType<typeof makeAgentStore>
