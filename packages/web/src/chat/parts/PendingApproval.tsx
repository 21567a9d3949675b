/**
 * A call that waits for the user's approval, whoever asks: the tool and the input it will run
 * with, and **Approve**, a reason and **Deny**. A turn's call (`ToolApprovalCard`, from the
 * transcript) and a parked job's (`DispatchCard`, from the job record's `waitingFor`) both draw
 * it; each gives its own way of sending the decision — the same route,
 * `POST /api/chats/{chatId}/approvals/{approvalId}` — and what came of it is said in place of the
 * buttons. Keyed by its approval id where it is placed: a new approval starts with fresh buttons.
 */
import { useState } from "react"
import { ToolCard } from "./ToolCard.tsx"

/** What came of a decision, said in place of the buttons; `retry`: it was not taken, the buttons come back. */
export interface DecisionNote {
  readonly text: string
  readonly retry?: boolean
}

/** Sends a decision (the reason: a denial's, trimmed; `undefined` when approved). `undefined`: taken as sent. */
export type DecideApproval = (approved: boolean, reason: string | undefined) => Promise<DecisionNote | undefined>

const sentNote = (approved: boolean): DecisionNote => ({ text: approved ? "Approved: it runs now." : "Denied." })

/** The buttons of a pending approval: a decision is sent once, unless it could not be. */
export function ApprovalActions({ decide, name }: { readonly decide: DecideApproval; readonly name: string }) {
  const [note, setNote] = useState<DecisionNote | undefined>(undefined)
  const [reason, setReason] = useState("")
  const send = (approved: boolean) => {
    setNote(sentNote(approved))
    void decide(approved, approved ? undefined : reason.trim()).then((outcome) => {
      if (outcome !== undefined) setNote(outcome)
    })
  }
  if (note !== undefined && note.retry !== true) return <p className="tool-note" role="status">{note.text}</p>
  return (
    <>
      {note === undefined ? null : <p className="tool-error" role="alert">{note.text}</p>}
      <div className="approval-actions">
        <button type="button" className="approve" onClick={() => send(true)} aria-label={`Approve ${name}`}>Approve</button>
        <input
          type="text"
          className="approval-reason"
          placeholder="Reason (optional)"
          aria-label="Reason for denying"
          maxLength={1000}
          value={reason}
          onChange={(event) => setReason(event.target.value)}
        />
        <button type="button" className="deny" onClick={() => send(false)} aria-label={`Deny ${name}`}>Deny</button>
      </div>
    </>
  )
}

export interface PendingApprovalProps {
  readonly name: string
  readonly input: unknown
  /** Who asks, as the note names it: "The agent", "The sub-agent". */
  readonly asker: string
  /** How the decision is sent; without it (no approval id) the card only says that it waits. */
  readonly decide?: DecideApproval | undefined
}

/** The card of a call awaiting approval: its tool, its input, who waits, and the decision. */
export function PendingApproval({ asker, decide, input, name }: PendingApprovalProps) {
  return (
    <ToolCard name={name} state="approval" label="Awaiting approval" input={input}>
      <p className="tool-note">{asker} asks to run <code>{name}</code> with this input. It waits for your decision.</p>
      {decide === undefined ? null : <ApprovalActions decide={decide} name={name} />}
    </ToolCard>
  )
}
