/**
 * An agent's definition as a form (docs/agents.md): name (on creation only),
 * description, system prompt template, model, job kinds (every sub-agent kind
 * the server has: the built-in ones and the operator's own), and three JSON
 * fields — the client tools (an array of the spec's tool schemas), the MCP
 * servers (their headers write-only: shown by name, kept unless given anew)
 * and the context's JSON Schema. The JSON is parsed before anything is sent, and an error is
 * said at its field; what the server (or the typed client's schema) refuses
 * is said at the field its message names, else under the form.
 */
import type { ApiFailure } from "@switchboard/client"
import type { AgentBody, AgentDefinition, JobKind, SubagentDefinition } from "@switchboard/domain"
import type { FormEvent, ReactNode } from "react"
import { useId, useState } from "react"
import { failureOf, pretty } from "./Common.tsx"

const BUILT_IN_LABELS: Readonly<Record<JobKind, string>> = {
  research: "research — a web research brief",
  demo: "demo — an interactive HTML demo",
  visual: "visual — an SVG visual"
}

const shortened = (text: string, max = 90) => {
  const line = text.trim().split("\n")[0]!.trim()
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`
}

/**
 * The job kinds to choose from: every kind the server lists (the built-in ones by their usual words, a
 * defined one by its description), the built-in ones alone until the list is there; and any kind the
 * agent names that the list lacks, so that saving the form never drops one unseen.
 */
export const kindChoices = (
  kinds: ReadonlyArray<Pick<SubagentDefinition, "kind" | "description">> | undefined,
  named: ReadonlyArray<string>
): ReadonlyArray<{ readonly kind: string; readonly label: string }> => {
  const listed = (kinds ?? Object.keys(BUILT_IN_LABELS).map((kind) => ({ kind, description: "" }))).map(({ description, kind }) => ({
    kind,
    label: Object.hasOwn(BUILT_IN_LABELS, kind)
      ? BUILT_IN_LABELS[kind as JobKind]
      : description.trim() === "" ? kind : `${kind} — ${shortened(description)}`
  }))
  const unlisted = named.filter((kind) => !listed.some((choice) => choice.kind === kind)).map((kind) => ({
    kind,
    label: kinds === undefined ? kind : `${kind} — not listed by the server`
  }))
  return [...listed, ...unlisted]
}

export type FieldName = "name" | "description" | "systemPrompt" | "model" | "jobKinds" | "tools" | "mcpServers" | "contextSchema" | "form"

export type FieldErrors = Partial<Record<FieldName, string>>

/** The field a refusal is about, from its code or the path its sentence names. */
export const fieldOf = (failure: ApiFailure): FieldName => {
  if (failure.code === "agent_exists") return "name"
  const text = failure.message
  if (/contextSchema/.test(text)) return "contextSchema"
  if (/mcpServers|MCP/.test(text)) return "mcpServers"
  // A kind the server does not have (deleted meanwhile): "jobKinds[1]: no sub-agent kind …".
  if (/\bjobKinds\[\d+\]/.test(text)) return "jobKinds"
  if (/\btools\b/.test(text)) return "tools"
  if (/systemPrompt/.test(text)) return "systemPrompt"
  if (/\bmodel\b/.test(text)) return "model"
  if (/\bdescription\b/.test(text)) return "description"
  if (/\bname\b/.test(text) && failure.code !== "agent_builtin") return "name"
  return "form"
}

export interface AgentFormProps {
  /** Editing this agent (its name fixed), or creating one when undefined. */
  readonly agent?: AgentDefinition
  /** The sub-agent kinds the server has (`GET /admin/subagents`); until they are there, the built-in ones. */
  readonly kinds?: ReadonlyArray<SubagentDefinition> | undefined
  readonly submitLabel: string
  /** Sends the definition; rejects with the typed client's error. */
  readonly onSubmit: (name: string, body: AgentBody) => Promise<void>
  readonly children?: ReactNode
}

const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (error) {
    return { ok: false, error: `Not JSON: ${error instanceof Error ? error.message : String(error)}` }
  }
}

/** What the note says of the stored headers: their names, kept when a server is saved without `headers`. */
const headerNote = (agent: AgentDefinition | undefined): string => {
  const named = (agent?.mcpServers ?? []).filter((server) => server.headerNames.length > 0)
  if (named.length === 0) return "give them to send them with every request to that server."
  return `${named.map((s) => `${s.name} has ${s.headerNames.join(", ")}`).join("; ")} — kept when its server is saved without headers.`
}

export const AgentForm = ({ agent, children, kinds, onSubmit, submitLabel }: AgentFormProps) => {
  const id = useId()
  const [errors, setErrors] = useState<FieldErrors>({})
  const [busy, setBusy] = useState(false)

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = event.currentTarget
    const data = new FormData(form)
    const text = (name: string) => String(data.get(name) ?? "")
    const found: FieldErrors = {}
    const name = agent?.name ?? text("name").trim()
    if (name === "") found.name = "Enter the agent's name."
    else if (!/^[a-z0-9_-]{1,64}$/.test(name)) found.name = "1 to 64 of a-z, 0-9, - and _."
    if (text("systemPrompt").trim() === "") found.systemPrompt = "Enter the system prompt."

    let tools: unknown = []
    if (text("tools").trim() !== "") {
      const parsed = parseJson(text("tools"))
      if (!parsed.ok) found.tools = parsed.error
      else if (!Array.isArray(parsed.value)) found.tools = "The tools are a JSON array of tool schemas ([] for none)."
      else tools = parsed.value
    }
    let mcpServers: unknown = []
    if (text("mcpServers").trim() !== "") {
      const parsed = parseJson(text("mcpServers"))
      if (!parsed.ok) found.mcpServers = parsed.error
      else if (!Array.isArray(parsed.value)) found.mcpServers = "The MCP servers are a JSON array ([] for none)."
      else mcpServers = parsed.value
    }
    let contextSchema: unknown = undefined
    if (text("contextSchema").trim() !== "") {
      const parsed = parseJson(text("contextSchema"))
      if (!parsed.ok) found.contextSchema = parsed.error
      else if (typeof parsed.value !== "object" || parsed.value === null || Array.isArray(parsed.value)) {
        found.contextSchema = "The context schema is a JSON object (a JSON Schema), or empty for none."
      } else contextSchema = parsed.value
    }
    setErrors(found)
    if (Object.keys(found).length > 0) {
      const first = (["name", "systemPrompt", "tools", "mcpServers", "contextSchema"] as const).find((field) => found[field] !== undefined)
      form.querySelector<HTMLElement>(`[name="${first}"]`)?.focus()
      return
    }
    const description = text("description").trim()
    const model = text("model").trim()
    // The JSON fields' shapes are the domain's schemas' business: the typed client checks them
    // before sending, the server again; either refusal comes back to its field.
    const body = {
      systemPrompt: text("systemPrompt"),
      description,
      tools,
      jobKinds: data.getAll("jobKinds").map(String),
      mcpServers,
      ...(contextSchema === undefined ? {} : { contextSchema }),
      ...(model === "" ? {} : { model })
    } as unknown as AgentBody
    setBusy(true)
    try {
      await onSubmit(name, body)
    } catch (error) {
      const failure = failureOf(error)
      const field = fieldOf(failure)
      setErrors({ [field]: failure.message })
      form.querySelector<HTMLElement>(field === "form" ? "button[type=submit]" : `[name="${field}"]`)?.focus()
    } finally {
      setBusy(false)
    }
  }

  /** A field's error wiring: `aria-invalid` and the message's id. */
  const wire = (field: FieldName, note?: string) => {
    const described = [note, errors[field] === undefined ? undefined : `${id}-${field}-error`].filter((s) => s !== undefined)
    return {
      ...(errors[field] === undefined ? {} : { "aria-invalid": true as const }),
      ...(described.length === 0 ? {} : { "aria-describedby": described.join(" ") })
    }
  }
  const errorOf = (field: FieldName) =>
    errors[field] === undefined ? null : <p id={`${id}-${field}-error`} className="form-error" role="alert">{errors[field]}</p>

  return (
    <form className="agent-form" onSubmit={(event) => void submit(event)} noValidate>
      {agent !== undefined ? null : (
        <div className="field">
          <label htmlFor={`${id}-name`}>Name</label>
          <input id={`${id}-name`} name="name" autoComplete="off" spellCheck={false} maxLength={64} {...wire("name", `${id}-name-note`)} />
          <p id={`${id}-name-note`} className="note">1 to 64 of a-z, 0-9, - and _; what a chat names (<code>agent</code>).</p>
          {errorOf("name")}
        </div>
      )}
      <div className="field">
        <label htmlFor={`${id}-description`}>Description</label>
        <input id={`${id}-description`} name="description" autoComplete="off" defaultValue={agent?.description ?? ""} {...wire("description")} />
        {errorOf("description")}
      </div>
      <div className="field">
        <label htmlFor={`${id}-prompt`}>System prompt</label>
        <textarea
          id={`${id}-prompt`}
          name="systemPrompt"
          rows={8}
          defaultValue={agent?.systemPrompt ?? ""}
          {...wire("systemPrompt", `${id}-prompt-note`)}
        />
        <p id={`${id}-prompt-note`} className="note">A template: <code>{"{{context.a.b}}"}</code> is filled from each turn's context.</p>
        {errorOf("systemPrompt")}
      </div>
      <div className="field">
        <label htmlFor={`${id}-model`}>Model <span className="muted">(optional: the server's LLM_MODEL)</span></label>
        <input id={`${id}-model`} name="model" autoComplete="off" defaultValue={agent?.model ?? ""} {...wire("model")} />
        {errorOf("model")}
      </div>
      <fieldset className="field" {...(errors.jobKinds === undefined ? {} : { "aria-describedby": `${id}-jobKinds-error` })}>
        <legend>Job kinds it may dispatch</legend>
        {kindChoices(kinds, agent?.jobKinds ?? []).map(({ kind, label }) => (
          <label key={kind} className="check">
            <input type="checkbox" name="jobKinds" value={kind} defaultChecked={agent?.jobKinds.includes(kind) ?? false} /> {label}
          </label>
        ))}
        {errorOf("jobKinds")}
      </fieldset>
      <div className="field">
        <label htmlFor={`${id}-tools`}>Client tools (JSON)</label>
        <textarea
          id={`${id}-tools`}
          name="tools"
          rows={8}
          className="code"
          spellCheck={false}
          defaultValue={pretty(agent?.tools ?? [])}
          {...wire("tools", `${id}-tools-note`)}
        />
        <p id={`${id}-tools-note`} className="note">
          An array of <code>{"{ name, description, parameters: [{ key, type, required }] }"}</code>; <code>[]</code> for none.
        </p>
        {errorOf("tools")}
      </div>
      <div className="field">
        <label htmlFor={`${id}-mcp`}>MCP servers (JSON)</label>
        <textarea
          id={`${id}-mcp`}
          name="mcpServers"
          rows={5}
          className="code"
          spellCheck={false}
          defaultValue={pretty((agent?.mcpServers ?? []).map(({ headerNames: _, ...server }) => server))}
          {...wire("mcpServers", `${id}-mcp-note`)}
        />
        <p id={`${id}-mcp-note`} className="note">
          An array of <code>{"{ name, url, headers?, tools?, requireApproval? }"}</code>; <code>[]</code> for none. Headers are
          write-only: {headerNote(agent)}
        </p>
        {errorOf("mcpServers")}
      </div>
      <div className="field">
        <label htmlFor={`${id}-schema`}>Context schema (JSON Schema)</label>
        <textarea
          id={`${id}-schema`}
          name="contextSchema"
          rows={6}
          className="code"
          spellCheck={false}
          defaultValue={agent?.contextSchema === undefined ? "" : pretty(agent.contextSchema)}
          {...wire("contextSchema", `${id}-schema-note`)}
        />
        <p id={`${id}-schema-note`} className="note">Empty: any JSON object is accepted as the context.</p>
        {errorOf("contextSchema")}
      </div>
      {errorOf("form")}
      <div className="actions">
        <button type="submit" disabled={busy}>{busy ? "Saving…" : submitLabel}</button>
        {children}
      </div>
    </form>
  )
}
