/**
 * The operator's provider profiles (`/operator/profiles`): the planner's
 * providers, which one is active, and which credential key encrypts each
 * key; a form that creates one; activating one; re-encrypting every stored
 * key under the current CREDENTIAL_KEY (after a confirmation); and the
 * decisions' retention sweep, now.
 *
 * The API key is write-only: a password field with autocomplete off, read
 * from the form when it is sent and never kept in React state, emptied as
 * soon as the request is sent (whatever its outcome). No answer of the server
 * holds it, so no page shows it again.
 */
import type { ApiFailure } from "@switchboard/client"
import type { ProfileView, PruneReport, RotationReport } from "@switchboard/domain"
import type { FormEvent } from "react"
import { useId, useRef, useState } from "react"
import { useAdminApi } from "../api/ConsoleApi.ts"
import type { PageProps } from "../app/Router.tsx"
import { ConfirmDialog, failureOf, FailureText, OperatorPage, Pending, TableRegion, Time, useAction, useLiveResult } from "./Common.tsx"

const PROVIDERS = [
  { value: "openai-compatible", label: "OpenAI-compatible (Chat Completions)" },
  { value: "anthropic", label: "Anthropic (Messages)" }
] as const

const CreateProfile = ({ onCreated }: { readonly onCreated: (profileId: string) => void }) => {
  const api = useAdminApi()
  const id = useId()
  const key = useRef<HTMLInputElement>(null)
  const { act, busy, failure, setFailure } = useAction()
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = event.currentTarget
    const data = new FormData(form)
    const text = (name: string) => String(data.get(name) ?? "").trim()
    // The key leaves the field for the request only: emptied now, never in state.
    const apiKey = text("apiKey")
    if (key.current !== null) key.current.value = ""
    data.delete("apiKey")
    const timeoutMs = Number(text("timeoutMs"))
    const missing = (["name", "model"] as const).filter((name) => text(name) === "")
    if (missing.length > 0 || apiKey === "" || !Number.isInteger(timeoutMs)) {
      setFailure({
        message: [
          ...missing.map((name) => `Enter the ${name}.`),
          ...(apiKey === "" ? ["Enter the API key."] : []),
          ...(Number.isInteger(timeoutMs) ? [] : ["The timeout is a whole number of milliseconds."])
        ].join(" ")
      })
      return
    }
    const provider = text("provider") === "anthropic" ? "anthropic" : "openai-compatible"
    const baseUrl = text("baseUrl")
    await act(async () => {
      const created = await api.run(api.client.admin.createProfile({
        payload: { name: text("name"), provider, model: text("model"), timeoutMs, apiKey, ...(baseUrl === "" ? {} : { baseUrl }) }
      }))
      form.reset()
      onCreated(created.profileId)
    })
  }
  const invalid = failure === undefined ? {} : { "aria-describedby": `${id}-error` }
  return (
    <form className="inline-form grid-form" onSubmit={(event) => void submit(event)} noValidate aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Create a profile</h2>
      <div className="field">
        <label htmlFor={`${id}-name`}>Name</label>
        <input id={`${id}-name`} name="name" maxLength={200} autoComplete="off" {...invalid} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-provider`}>Provider</label>
        <select id={`${id}-provider`} name="provider" defaultValue="openai-compatible">
          {PROVIDERS.map((p) => <option key={p.value} value={p.value}>{p.label}</option>)}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-model`}>Model</label>
        <input id={`${id}-model`} name="model" autoComplete="off" {...invalid} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-timeout`}>Timeout (ms)</label>
        <input id={`${id}-timeout`} name="timeoutMs" type="number" inputMode="numeric" min={1} max={600000} defaultValue={30000} />
      </div>
      <div className="field wide">
        <label htmlFor={`${id}-base`}>Base URL <span className="muted">(optional: the provider's public API)</span></label>
        <input id={`${id}-base`} name="baseUrl" type="url" autoComplete="off" placeholder="https://api.openai.com/v1" />
      </div>
      <div className="field wide">
        <label htmlFor={`${id}-key`}>API key</label>
        <input
          ref={key}
          id={`${id}-key`}
          name="apiKey"
          type="password"
          autoComplete="off"
          spellCheck={false}
          aria-describedby={`${id}-key-note${failure === undefined ? "" : ` ${id}-error`}`}
        />
        <p id={`${id}-key-note`} className="note">Write-only: stored encrypted and never shown again.</p>
      </div>
      {failure === undefined ? null : <p id={`${id}-error`} className="form-error wide" role="alert">{failure.message}</p>}
      <button type="submit" disabled={busy}>{busy ? "Creating…" : "Create profile"}</button>
    </form>
  )
}

/** Rotation, pruning: an action's outcome said under its button. */
type Outcome<A> = { readonly ok: A } | { readonly failure: ApiFailure } | undefined

export default function ProfilesPage(_props: PageProps) {
  const api = useAdminApi()
  const profiles = useLiveResult(api, (client) => client.admin.listProfiles(), [])
  const [notice, setNotice] = useState<string | undefined>(undefined)
  const [activation, setActivation] = useState<ApiFailure | undefined>(undefined)
  const [rotating, setRotating] = useState(false)
  const [rotation, setRotation] = useState<Outcome<RotationReport>>(undefined)
  const [prune, setPrune] = useState<Outcome<PruneReport>>(undefined)
  const [pruning, setPruning] = useState(false)
  const list = profiles.value?.profiles

  const activate = async (profile: ProfileView) => {
    setActivation(undefined)
    try {
      await api.run(api.client.admin.activateProfile({ params: { profileId: profile.profileId } }))
      setNotice(`${profile.name} is the active profile.`)
      profiles.reload()
    } catch (error) {
      setActivation(failureOf(error))
    }
  }

  const runPrune = async () => {
    setPruning(true)
    try {
      setPrune({ ok: await api.run(api.client.admin.pruneDecisions()) })
    } catch (error) {
      setPrune({ failure: failureOf(error) })
    } finally {
      setPruning(false)
    }
  }

  return (
    <OperatorPage title="Provider profiles" intro="The planner's providers: hosts hold no key, the server calls the active profile's provider.">
      <CreateProfile
        onCreated={(profileId) => {
          setNotice(`Profile ${profileId} created. Activate it to use it.`)
          profiles.reload()
        }}
      />
      <p className="status" role="status">{notice ?? ""}</p>
      <FailureText failure={activation} prefix="Could not activate the profile" />

      <Pending result={profiles} what="profiles" />
      {list === undefined ? null : list.length === 0
        ? <p className="status">No profiles yet: the planner answers 503 no_active_profile until one is active.</p>
        : (
          <TableRegion label={`${list.length} profile${list.length === 1 ? "" : "s"}`}>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Active</th>
                <th scope="col">Provider</th>
                <th scope="col">Model</th>
                <th scope="col">Base URL</th>
                <th scope="col">Timeout</th>
                <th scope="col">Key id</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.map((profile) => (
                <tr key={profile.profileId}>
                  <th scope="row">{profile.name}</th>
                  <td>
                    {profile.active
                      ? <span className="badge badge-online">Active</span>
                      : (
                        <button type="button" className="secondary small" onClick={() => void activate(profile)}>
                          Activate<span className="visually-hidden"> {profile.name}</span>
                        </button>
                      )}
                  </td>
                  <td>{profile.provider}</td>
                  <td><code>{profile.model}</code></td>
                  <td><code>{profile.baseUrl}</code></td>
                  <td>{profile.timeoutMs} ms</td>
                  <td><code>{profile.credentialKeyId}</code></td>
                  <td><Time iso={profile.createdAt} /></td>
                </tr>
              ))}
            </tbody>
          </TableRegion>
        )}
      {profiles.value !== undefined ? <FailureText failure={profiles.failure} prefix="Could not refresh the profiles" /> : null}

      <section className="tool" aria-labelledby="rotate-title">
        <h2 id="rotate-title">Credential key</h2>
        <p>
          After restarting every replica with a new <code>CREDENTIAL_KEY</code> (and the old one as{" "}
          <code>CREDENTIAL_KEY_PREVIOUS</code>), re-encrypt the stored keys under the new one.
        </p>
        <button type="button" onClick={() => setRotating(true)}>Rotate credential key…</button>
        {rotation === undefined ? null : "ok" in rotation
          ? (
            <p className="status" role="status">
              Key <code>{rotation.ok.keyId}</code>: {rotation.ok.reencrypted} re-encrypted, {rotation.ok.alreadyCurrent} already
              current{rotation.ok.undecryptable.length === 0 ? "." : `, undecryptable: ${rotation.ok.undecryptable.join(", ")}.`}
            </p>
          )
          : <FailureText failure={rotation.failure} prefix="Rotation failed" />}
      </section>

      <section className="tool" aria-labelledby="prune-title">
        <h2 id="prune-title">Planner decisions</h2>
        <p>Delete now the decisions of tasks that ended longer ago than <code>PLANNER_DECISION_RETENTION</code>.</p>
        <button type="button" className="secondary" disabled={pruning} onClick={() => void runPrune()}>
          {pruning ? "Pruning…" : "Prune decisions now"}
        </button>
        {prune === undefined ? null : "ok" in prune
          ? <p className="status" role="status">{prune.ok.deleted} decision{prune.ok.deleted === 1 ? "" : "s"} deleted.</p>
          : <FailureText failure={prune.failure} prefix="Pruning failed" />}
      </section>

      <ConfirmDialog
        open={rotating}
        title="Re-encrypt every stored key?"
        confirmLabel="Rotate"
        danger={false}
        onClose={() => setRotating(false)}
        onConfirm={async () => {
          try {
            setRotation({ ok: await api.run(api.client.admin.rotateCredentialKey()) })
            profiles.reload()
          } catch (error) {
            setRotation({ failure: failureOf(error) })
          }
        }}
      >
        <p>
          Every profile's key is decrypted (with <code>CREDENTIAL_KEY</code> or <code>CREDENTIAL_KEY_PREVIOUS</code>) and
          encrypted again under <code>CREDENTIAL_KEY</code>. Once every profile shows the new key id,{" "}
          <code>CREDENTIAL_KEY_PREVIOUS</code> can be removed.
        </p>
      </ConfirmDialog>
    </OperatorPage>
  )
}
