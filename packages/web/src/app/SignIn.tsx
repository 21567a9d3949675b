/**
 * The sign-in form a 401 brings up: the realm's token, tried against the
 * server before it is kept (`probes`), so a wrong one is refused here and
 * asked again. Kept in sessionStorage only (`Session.ts`); the form never
 * submits anywhere (no URL ever carries the token). The chat's field takes
 * either a user's JWT (the product's sign-in, docs/users.md) or the server's
 * `CHAT_TOKEN`: both are bearer tokens, the server tells them apart.
 */
import { describeApiFailure } from "@switchboard/client"
import { Effect } from "effect"
import type { FormEvent, ReactNode } from "react"
import { useId, useRef, useState } from "react"
import { makeConsoleApi } from "../api/ConsoleApi.ts"
import { probes } from "../api/Probes.ts"
import { isUnauthorized, signIn } from "../api/Session.ts"
import type { Realm } from "../api/Session.ts"

const LABELS: Record<Realm, {
  readonly title: string
  readonly label: string
  /** What the empty field's error asks for. */
  readonly noun: string
  readonly intro: ReactNode
}> = {
  chat: {
    title: "Sign in to chat",
    label: "Sign-in token (JWT) or chat token",
    noun: "token",
    intro: (
      <>
        The server asks who you are: paste the sign-in token (a JWT) your product gave you, or the server's{" "}
        <code>CHAT_TOKEN</code>. It stays in this tab only, until the tab is closed.
      </>
    )
  },
  admin: {
    title: "Sign in as operator",
    label: "Admin token",
    noun: "admin token",
    intro: (
      <>
        The server asks for its <code>ADMIN_TOKEN</code>. It stays in this tab only, until the tab is closed.
      </>
    )
  }
}

export const SignIn = ({ realm }: { readonly realm: Realm }) => {
  const id = useId()
  const input = useRef<HTMLInputElement>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  const { intro, label, noun, title } = LABELS[realm]

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const token = input.current?.value.trim() ?? ""
    if (token === "") {
      setError(`Enter the ${noun}.`)
      input.current?.focus()
      return
    }
    setBusy(true)
    setError(undefined)
    const api = makeConsoleApi(realm, token)
    try {
      await api.run(probes[realm](api.client))
      signIn(realm, token)
    } catch (failure) {
      setError(isUnauthorized(failure)
        ? "The server refused this token. Check it and try again."
        : `The token could not be checked: ${Effect.runSync(describeApiFailure(failure)).message}`)
      if (input.current !== null) input.current.value = ""
      input.current?.focus()
    } finally {
      setBusy(false)
    }
  }

  return (
    <section className="sign-in" aria-labelledby={`${id}-title`}>
      <h1 id={`${id}-title`} tabIndex={-1}>{title}</h1>
      <p>{intro}</p>
      <form method="post" onSubmit={(event) => void submit(event)} noValidate>
        <label htmlFor={`${id}-token`}>{label}</label>
        <input
          ref={input}
          id={`${id}-token`}
          name="token"
          type="password"
          autoComplete="off"
          spellCheck={false}
          autoFocus
          aria-invalid={error === undefined ? undefined : true}
          aria-describedby={error === undefined ? undefined : `${id}-error`}
        />
        {error === undefined ? null : <p id={`${id}-error`} className="form-error" role="alert">{error}</p>}
        <button type="submit" disabled={busy}>{busy ? "Signing in…" : "Sign in"}</button>
      </form>
    </section>
  )
}
