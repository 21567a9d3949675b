/** A text part of the user's message: their words as written, in a bubble (never parsed as markdown). */
export function UserText({ text }: { readonly text: string }) {
  return <div className="msg-bubble">{text}</div>
}
