/**
 * The operator's agents (`/operator/agents`): every agent (the built-in
 * first, read-only), each linking to its page (edit, delete); the sub-agent
 * kinds agents may name (`SubagentKinds.tsx`: the built-in ones read-only, a
 * defined one deleted here); a form that defines a new agent, offering those
 * kinds; and the operator's chat tool — delete a chat by id, after a
 * confirmation (a chat belongs to an agent, so it lives here rather than on a
 * page of its own).
 */
import type { ApiFailure } from "@switchboard/client"
import type { FormEvent } from "react"
import { useId, useRef, useState } from "react"
import { useAdminApi } from "../api/ConsoleApi.ts"
import { Link, navigate } from "../app/Router.tsx"
import type { PageProps } from "../app/Router.tsx"
import { AgentForm } from "./AgentForm.tsx"
import { ConfirmDialog, FailureText, OperatorPage, Pending, TableRegion, useLiveResult } from "./Common.tsx"
import { SubagentKinds } from "./SubagentKinds.tsx"

const DeleteChat = () => {
  const api = useAdminApi()
  const id = useId()
  const input = useRef<HTMLInputElement>(null)
  const [chatId, setChatId] = useState<string | undefined>(undefined)
  const [done, setDone] = useState<string | undefined>(undefined)
  const [failure, setFailure] = useState<ApiFailure | undefined>(undefined)
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const value = input.current?.value.trim() ?? ""
    setDone(undefined)
    if (value === "") {
      setFailure({ message: "Enter the chat's id." })
      input.current?.focus()
      return
    }
    setFailure(undefined)
    setChatId(value)
  }
  return (
    <section className="tool" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Delete a chat</h2>
      <p>
        Its transcript, its jobs and its pending steers go at once; a job running for it writes nothing. The id may be used
        again, for a new empty chat.
      </p>
      <form className="inline-form" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={`${id}-chat`}>Chat id</label>
          <input
            ref={input}
            id={`${id}-chat`}
            name="chatId"
            autoComplete="off"
            spellCheck={false}
            aria-invalid={failure === undefined ? undefined : true}
            aria-describedby={failure === undefined ? undefined : `${id}-error`}
          />
        </div>
        {failure === undefined ? null : <p id={`${id}-error`} className="form-error" role="alert">{failure.message}</p>}
        <button type="submit" className="danger">Delete chat…</button>
      </form>
      <p className="status" role="status">{done === undefined ? "" : `Chat ${done} deleted.`}</p>
      <ConfirmDialog
        open={chatId !== undefined}
        title={`Delete chat ${chatId ?? ""}?`}
        confirmLabel="Delete chat"
        onClose={() => setChatId(undefined)}
        onConfirm={async () => {
          if (chatId === undefined) return
          await api.run(api.client.admin.deleteChat({ params: { chatId }, query: {} }))
          setDone(chatId)
          if (input.current !== null) input.current.value = ""
        }}
      >
        <p>Its transcript and jobs are deleted for good.</p>
      </ConfirmDialog>
    </section>
  )
}

export default function AgentsPage(_props: PageProps) {
  const api = useAdminApi()
  const agents = useLiveResult(api, (client) => client.agentsAdmin.list(), [])
  const kinds = useLiveResult(api, (client) => client.subagentsAdmin.list(), [])
  const id = useId()
  const list = agents.value?.agents
  return (
    <OperatorPage title="Agents" intro="What a chat tells the model and offers it: a system prompt, client tools, job kinds — and the sub-agent kinds those jobs run.">
      <Pending result={agents} what="agents" />
      {list === undefined ? null : (
        <TableRegion label={`${list.length} agent${list.length === 1 ? "" : "s"}`}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Tools</th>
              <th scope="col">Job kinds</th>
              <th scope="col">Model</th>
            </tr>
          </thead>
          <tbody>
            {list.map((agent) => (
              <tr key={agent.name}>
                <th scope="row">
                  <Link to={`/operator/agents/${encodeURIComponent(agent.name)}`}>{agent.name}</Link>
                  {agent.builtIn ? <> <span className="badge badge-builtin">built-in</span></> : null}
                </th>
                <td>{agent.description === "" ? <span className="muted">—</span> : agent.description}</td>
                <td>{agent.tools.length === 0 ? <span className="muted">none</span> : agent.tools.map((t) => t.name).join(", ")}</td>
                <td>{agent.jobKinds.length === 0 ? <span className="muted">none</span> : agent.jobKinds.join(", ")}</td>
                <td>{agent.model === undefined ? <span className="muted">default</span> : <code>{agent.model}</code>}</td>
              </tr>
            ))}
          </tbody>
        </TableRegion>
      )}
      {agents.value !== undefined ? <FailureText failure={agents.failure} prefix="Could not refresh the agents" /> : null}

      <SubagentKinds api={api} kinds={kinds} />

      <section className="tool" aria-labelledby={`${id}-new`}>
        <h2 id={`${id}-new`}>Define an agent</h2>
        <AgentForm
          kinds={kinds.value?.subagents}
          submitLabel="Create agent"
          onSubmit={async (name, body) => {
            await api.run(api.client.agentsAdmin.create({ payload: { name, ...body } }))
            navigate(`/operator/agents/${encodeURIComponent(name)}`)
          }}
        />
      </section>

      <DeleteChat />
    </OperatorPage>
  )
}
