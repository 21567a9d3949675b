/**
 * Who this tab is signed in as, at the end of the header: the user a JWT names (its `sub`, read
 * for display only: the server verifies the token), or the shared chat token, or the operator's;
 * and "Sign out", which forgets every token of the tab and what this browser kept of the user's
 * chats (`signOutAll`), then shows the sign-in of the page in view. Nothing while no token is held
 * (a server that asks for none, or a sign-in under way).
 */
import { useStore } from "zustand"
import { identityOf, sessionStore, signOutAll } from "../api/Session.ts"
import type { Realm } from "../api/Session.ts"
import { navigate } from "./Router.tsx"

const signOut = (realm: Realm) => {
  signOutAll(realm)
  // A conversation's address is its user's: the next one to sign in starts at the chat.
  if (location.pathname.startsWith("/chats/")) navigate("/", { replace: true })
}

export const Account = ({ realm }: { readonly realm: Realm }) => {
  const chat = useStore(sessionStore, (state) => state.tokens.chat)
  const admin = useStore(sessionStore, (state) => state.tokens.admin)
  if (chat === undefined && admin === undefined) return null
  const identity = identityOf(chat)
  const operator = admin === undefined ? null : chat === undefined ? "Signed in: operator" : ", operator"
  return (
    <div className="account">
      <p className="account-who">
        {identity !== undefined
          ? <>Signed in as <strong title={identity.user}>{identity.user}</strong></>
          : chat !== undefined
          ? "Signed in: chat token"
          : null}
        {operator}
      </p>
      <button type="button" className="account-sign-out" onClick={() => signOut(realm)}>Sign out</button>
    </div>
  )
}
