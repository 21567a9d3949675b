/**
 * The storage port of the persisted stores: Zustand's `StateStorage`, over
 * memory (tests, one-shot programs) or the browser's Web Storage. The
 * terminal keeps its state in files (the CLI's `FileStorage`).
 *
 * Both are synchronous on purpose: Zustand's persist middleware then hydrates
 * while the store is created, so a store is complete as soon as
 * `makeChatStore` returns and no caller has to wait for hydration.
 */
import type { StateStorage } from "zustand/middleware"

/** An in-memory storage; pass the same instance to two stores to simulate a restart. */
export const memoryStorage = (initial?: Iterable<readonly [string, string]>): StateStorage<void> & {
  readonly items: Map<string, string>
} => {
  const items = new Map<string, string>(initial)
  return {
    items,
    getItem: (name) => items.get(name) ?? null,
    setItem: (name, value) => {
      items.set(name, value)
    },
    removeItem: (name) => {
      items.delete(name)
    }
  }
}

/** The minimal part of the Web Storage API the stores use (`localStorage`, `sessionStorage`). */
export interface WebStorageLike {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/**
 * A Web Storage (the browser's `localStorage` by default), every key under `prefix` so two
 * applications on one origin do not read each other's stores.
 *
 * A write the storage refuses (its quota full: a long conversation, a few demos) keeps the last
 * copy that fitted and is told to `onRefused`, never thrown: the persist middleware writes inside
 * the store's own update, so a throw would break whatever updated it (a message being sent, a
 * re-sync). The conversation itself is the server's transcript; a reload re-syncs from it.
 */
export const webStorage = (
  storage: WebStorageLike = (globalThis as { localStorage?: WebStorageLike }).localStorage ?? missingWebStorage(),
  prefix = "switchboard:",
  onRefused: (name: string, error: unknown) => void = () => {}
): StateStorage<void> => ({
  getItem: (name) => storage.getItem(prefix + name),
  setItem: (name, value) => {
    try {
      storage.setItem(prefix + name, value)
    } catch (error) {
      onRefused(name, error)
    }
  },
  removeItem: (name) => storage.removeItem(prefix + name)
})

const missingWebStorage = (): never => {
  throw new Error("webStorage: this runtime has no localStorage; pass a storage (or use memoryStorage)")
}
