/**
 * The sub-agent kinds, on the agents page (docs/subagents.md): every kind an agent may name among
 * its `jobKinds` (`GET /admin/subagents`) — the built-in ones first, read-only, then the operator's
 * own — each with what the chat model reads of it (its description, its input parameters), what
 * its sub-agent has (its tools, its MCP servers by name), the result it must submit (the JSON
 * Schema, folded) and its limits. A defined kind is deleted after a confirmation; one an agent
 * still names is refused (409 `subagent_in_use`), said in the dialog. Kinds are written with
 * `switchboard admin subagents apply` (`PUT /admin/subagents/{kind}`), not here.
 */
import type { SubagentDefinition, SubagentList, ToolParameter } from "@switchboard/domain"
import { Fragment, useId, useState } from "react"
import type { ConsoleApi } from "../api/ConsoleApi.ts"
import type { LiveResult } from "./Common.tsx"
import { ConfirmDialog, FailureText, Pending, pretty } from "./Common.tsx"

/** "90 s", "10 min", "2 h": a time limit as people read it. */
export const durationText = (ms: number): string => {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`
  if (ms < 3_600_000) return `${Math.round(ms / 60_000 * 10) / 10} min`
  return `${Math.round(ms / 3_600_000 * 10) / 10} h`
}

const None = () => <span className="muted">none</span>

const Parameter = ({ parameter }: { readonly parameter: ToolParameter }) => (
  <li>
    <code>{parameter.key}</code> <span className="muted">
      {parameter.type}
      {parameter.enum === undefined ? "" : ` (${parameter.enum.join(" | ")})`}, {parameter.required ? "required" : "optional"}
    </span>
    {parameter.description === undefined || parameter.description === "" ? null : <> — {parameter.description}</>}
  </li>
)

const KindCard = ({ definition, onDelete }: { readonly definition: SubagentDefinition; readonly onDelete: () => void }) => {
  const id = useId()
  const servers = definition.mcpServers ?? []
  return (
    <li>
      <article className="kind-card" aria-labelledby={`${id}-name`} data-kind={definition.kind}>
        <div className="kind-card__head">
          <h3 id={`${id}-name`}><code>{definition.kind}</code></h3>
          {definition.builtIn ? <span className="badge badge-builtin">built-in</span> : null}
          {definition.builtIn ? null : (
            <button type="button" className="danger small" onClick={onDelete} aria-describedby={`${id}-name`}>Delete kind…</button>
          )}
        </div>
        <p>{definition.description}</p>
        <dl className="facts">
          <div className="kind-card__input">
            <dt>Input</dt>
            <dd>
              {definition.input.length === 0 ? <None /> : (
                <ul className="kind-params">
                  {definition.input.map((parameter) => <Parameter key={parameter.key} parameter={parameter} />)}
                </ul>
              )}
            </dd>
          </div>
          <div>
            <dt>Tools</dt>
            <dd>
              {definition.tools.length === 0 ? <None /> : definition.tools.map((tool, i) => (
                <Fragment key={tool}>{i === 0 ? "" : ", "}<code>{tool}</code></Fragment>
              ))}
            </dd>
          </div>
          <div>
            <dt>MCP servers</dt>
            <dd>{servers.length === 0 ? <None /> : servers.map((server) => server.name).join(", ")}</dd>
          </div>
          <div>
            <dt>Limits</dt>
            <dd>
              {definition.maxSteps} step{definition.maxSteps === 1 ? "" : "s"}
              {" · "}
              {definition.timeoutMs === undefined ? <span className="muted">the server's time limit</span> : durationText(definition.timeoutMs)}
            </dd>
          </div>
          <div>
            <dt>Model</dt>
            <dd>{definition.model === undefined ? <span className="muted">the server's</span> : <code>{definition.model}</code>}</dd>
          </div>
        </dl>
        <details>
          <summary>Result schema</summary>
          <pre tabIndex={0} className="arguments"><code>{pretty(definition.result)}</code></pre>
        </details>
        <details>
          <summary>System prompt</summary>
          <pre tabIndex={0} className="prompt">{definition.systemPrompt}</pre>
        </details>
      </article>
    </li>
  )
}

export interface SubagentKindsProps {
  readonly api: ConsoleApi
  /** `GET /admin/subagents`, the page's (the agent form offers the same kinds). */
  readonly kinds: LiveResult<SubagentList>
}

export const SubagentKinds = ({ api, kinds }: SubagentKindsProps) => {
  const id = useId()
  const [deleting, setDeleting] = useState<string | undefined>(undefined)
  const [deleted, setDeleted] = useState<string | undefined>(undefined)
  const list = kinds.value?.subagents
  return (
    <section className="kinds" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Sub-agent kinds</h2>
      <p className="note">
        What an agent may hand work off to (its job kinds): the built-in ones, read-only, and those defined with{" "}
        <code>switchboard admin subagents apply</code> (<code>PUT /admin/subagents/{"{kind}"}</code>).
      </p>
      <Pending result={kinds} what="sub-agent kinds" />
      {list === undefined ? null : <ul className="kind-list">{list.map((definition) => (
        <KindCard key={definition.kind} definition={definition} onDelete={() => setDeleting(definition.kind)} />
      ))}</ul>}
      {kinds.value !== undefined ? <FailureText failure={kinds.failure} prefix="Could not refresh the sub-agent kinds" /> : null}
      <p className="status" role="status">{deleted === undefined ? "" : `Kind ${deleted} deleted.`}</p>
      <ConfirmDialog
        open={deleting !== undefined}
        title={`Delete the kind ${deleting ?? ""}?`}
        confirmLabel="Delete kind"
        onClose={() => setDeleting(undefined)}
        onConfirm={async () => {
          if (deleting === undefined) return
          setDeleted(undefined)
          await api.run(api.client.subagentsAdmin.remove({ params: { kind: deleting } }))
          setDeleted(deleting)
          kinds.reload()
        }}
      >
        <p>
          Jobs already dispatched finish with it. A kind an agent still names among its job kinds is not deleted: take it
          out of that agent first.
        </p>
      </ConfirmDialog>
    </section>
  )
}
