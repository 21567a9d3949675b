/**
 * What the turn is doing now, for the cards of calls still waiting for their result: whether a turn
 * runs, and the tool the agent runs (the agent store's `activeTool`). Live state, not the part's:
 * the message list provides it, so a card need not read the stores, and a card outside the list
 * (nothing provided) shows its call as not run.
 */
import { createContext } from "react"

export interface TurnActivity {
  /** A turn is running (the chat store's `loading`). */
  readonly running: boolean
  /** The client tool being run, if one is. */
  readonly activeTool: string | null
}

export const TurnActivityContext = createContext<TurnActivity>({ running: false, activeTool: null })
