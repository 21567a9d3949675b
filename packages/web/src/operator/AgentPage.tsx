/**
 * One agent (`/operator/agents/:name`): its definition in the form, saved
 * whole (`PUT`, what `switchboard admin agents apply` sends), and deleting it
 * after a confirmation. The built-in agent is shown read-only: the server
 * refuses to replace or delete it.
 */
import type { AgentDefinition } from "@switchboard/domain"
import { useState } from "react"
import { useAdminApi } from "../api/ConsoleApi.ts"
import { Link, navigate } from "../app/Router.tsx"
import type { PageProps } from "../app/Router.tsx"
import { AgentForm } from "./AgentForm.tsx"
import { ConfirmDialog, OperatorPage, Pending, pretty, useLiveResult } from "./Common.tsx"

const ReadOnly = ({ agent }: { readonly agent: AgentDefinition }) => (
  <>
    <p className="callout">
      The built-in agent is the spec's media editor: its prompt is built from the context by the server, and it cannot be
      replaced or deleted. Define another agent to change what a chat tells the model.
    </p>
    <dl className="facts">
      <div><dt>Description</dt><dd>{agent.description}</dd></div>
      <div><dt>Job kinds</dt><dd>{agent.jobKinds.join(", ")}</dd></div>
      <div><dt>Model</dt><dd>{agent.model ?? "the server's LLM_MODEL"}</dd></div>
    </dl>
    <h2>System prompt</h2>
    <pre tabIndex={0} className="prompt">{agent.systemPrompt}</pre>
    <h2>Client tools</h2>
    <pre tabIndex={0} className="arguments"><code>{pretty(agent.tools)}</code></pre>
    {agent.contextSchema === undefined ? null : (
      <>
        <h2>Context schema</h2>
        <pre tabIndex={0} className="arguments"><code>{pretty(agent.contextSchema)}</code></pre>
      </>
    )}
  </>
)

export default function AgentPage({ params }: PageProps) {
  const api = useAdminApi()
  const name = params.name ?? ""
  // The admin API lists agents; one is found in the list.
  const agents = useLiveResult(api, (client) => client.agentsAdmin.list(), [name])
  // The kinds its form offers: every one the server has.
  const kinds = useLiveResult(api, (client) => client.subagentsAdmin.list(), [])
  const [saved, setSaved] = useState<string | undefined>(undefined)
  const [deleting, setDeleting] = useState(false)
  const agent = agents.value?.agents.find((a) => a.name === name)

  return (
    <OperatorPage title={`Agent ${name}`}>
      <p><Link to="/operator/agents">← All agents</Link></p>
      <Pending result={agents} what="agent" />
      {agents.value === undefined ? null : agent === undefined
        ? <p className="form-error" role="alert">No agent is named {name}.</p>
        : agent.builtIn
        ? <ReadOnly agent={agent} />
        : (
          <>
            <AgentForm
              key={JSON.stringify(agent)}
              agent={agent}
              kinds={kinds.value?.subagents}
              submitLabel="Save agent"
              onSubmit={async (agentName, body) => {
                setSaved(undefined)
                await api.run(api.client.agentsAdmin.put({ params: { name: agentName }, payload: body }))
                setSaved(new Date().toISOString())
                agents.reload()
              }}
            >
              <button type="button" className="danger" onClick={() => setDeleting(true)}>Delete agent…</button>
            </AgentForm>
            <p className="status" role="status">{saved === undefined ? "" : "Saved: the next turn of its chats uses it."}</p>
          </>
        )}
      <ConfirmDialog
        open={deleting}
        title={`Delete agent ${name}?`}
        confirmLabel="Delete agent"
        onClose={() => setDeleting(false)}
        onConfirm={async () => {
          await api.run(api.client.agentsAdmin.remove({ params: { name } }))
          navigate("/operator/agents")
        }}
      >
        <p>Its chats keep their transcripts, but their next turn answers 404 agent_not_found.</p>
      </ConfirmDialog>
    </OperatorPage>
  )
}
