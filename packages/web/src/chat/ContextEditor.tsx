/**
 * The agent context the turns carry (the domain's `AgentContext`): the project, the active scene,
 * the playback time and the media assets — kept in the agent store (persisted), edited here. A
 * media asset is a URL (`http(s):`, `data:`) or a file the user picks: `transcribe_video` uploads
 * that file's bytes when the agent calls it (`PickedFiles.ts`).
 */
import type { AgentContext, MediaAsset, MediaKind } from "@switchboard/domain"
import type { ChangeEvent, FormEvent } from "react"
import { useId, useState } from "react"
import { useStore } from "zustand"
import { agentStore } from "./ChatStores.ts"
import { forgetFile, isPicked, pickedFiles, pickedUri, rememberFile } from "./PickedFiles.ts"

export const emptyContext: AgentContext = { projectId: "my-project", activeSceneId: null, mediaAssets: [], playbackTimeMs: 0 }

const update = (change: (context: AgentContext) => AgentContext) =>
  agentStore.getState().setContext(change(agentStore.getState().context ?? emptyContext))

const kindOf = (type: string): MediaKind => type.startsWith("audio/") ? "audio" : type.startsWith("image/") ? "image" : "video"

/** An asset id from a name (`My clip.webm` → `my-clip`), unused in the context. */
const newAssetId = (name: string, assets: ReadonlyArray<MediaAsset>): string => {
  const base = name.replace(/\.[^.]*$/, "").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "asset"
  let id = base
  for (let n = 2; assets.some((a) => a.id === id); n++) id = `${base}-${n}`
  return id
}

const formatBytes = (bytes: number) => bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`

const AssetEditor = ({ asset }: { readonly asset: MediaAsset }) => {
  const id = useId()
  const file = useStore(pickedFiles, (state) => state.files.get(asset.id))
  const setAsset = (change: Partial<MediaAsset>) =>
    update((context) => ({ ...context, mediaAssets: context.mediaAssets.map((a) => a.id === asset.id ? { ...a, ...change } : a) }))
  const pick = (event: ChangeEvent<HTMLInputElement>) => {
    const picked = event.target.files?.[0]
    if (picked === undefined) return
    rememberFile(asset.id, picked)
    setAsset({ uri: pickedUri(picked), kind: kindOf(picked.type) })
  }
  return (
    <li className="asset">
      <fieldset>
        <legend><code>{asset.id}</code></legend>
        <label htmlFor={`${id}-name`}>Name</label>
        <input id={`${id}-name`} value={asset.name} onChange={(event) => setAsset({ name: event.target.value })} />
        <label htmlFor={`${id}-kind`}>Kind</label>
        <select id={`${id}-kind`} value={asset.kind} onChange={(event) => setAsset({ kind: event.target.value as MediaKind })}>
          <option value="video">Video</option>
          <option value="audio">Audio</option>
          <option value="image">Image</option>
        </select>
        {isPicked(asset)
          ? (
            <p className="asset-source">
              {file === undefined
                ? <>The file <strong>{asset.uri.slice("picked-file:".length)}</strong> must be picked again (files stay with the page that picked them).</>
                : <>File <strong>{file.name}</strong>, {formatBytes(file.size)}</>}
            </p>
          )
          : (
            <>
              <label htmlFor={`${id}-uri`}>URL</label>
              <input
                id={`${id}-uri`}
                value={asset.uri}
                inputMode="url"
                onChange={(event) => event.target.value.trim() !== "" && setAsset({ uri: event.target.value.trim() })}
              />
            </>
          )}
        <label htmlFor={`${id}-file`}>{isPicked(asset) ? "Pick the file again" : "Or pick a file"}</label>
        <input id={`${id}-file`} type="file" accept="video/*,audio/*,image/*" onChange={pick} />
        <button
          type="button"
          className="secondary"
          onClick={() => {
            forgetFile(asset.id)
            update((context) => ({ ...context, mediaAssets: context.mediaAssets.filter((a) => a.id !== asset.id) }))
          }}
        >
          Remove {asset.name || asset.id}
        </button>
      </fieldset>
    </li>
  )
}

export const ContextEditor = () => {
  const id = useId()
  const context = useStore(agentStore, (state) => state.context) ?? emptyContext
  const [project, setProject] = useState(context.projectId)
  const [url, setUrl] = useState("")
  const [urlError, setUrlError] = useState<string | undefined>(undefined)

  const addFile = (event: ChangeEvent<HTMLInputElement>) => {
    const files = [...(event.target.files ?? [])]
    for (const file of files) {
      update((current) => {
        const assetId = newAssetId(file.name, current.mediaAssets)
        rememberFile(assetId, file)
        return { ...current, mediaAssets: [...current.mediaAssets, { id: assetId, name: file.name, kind: kindOf(file.type), uri: pickedUri(file) }] }
      })
    }
    event.target.value = ""
  }
  const addUrl = (event: FormEvent) => {
    event.preventDefault()
    let parsed: URL
    try {
      parsed = new URL(url.trim())
    } catch {
      setUrlError("Enter a full URL (https://…).")
      return
    }
    setUrlError(undefined)
    const name = decodeURIComponent(parsed.pathname.split("/").at(-1) ?? "") || parsed.hostname
    update((current) => ({
      ...current,
      mediaAssets: [...current.mediaAssets, { id: newAssetId(name, current.mediaAssets), name, kind: "video", uri: parsed.href }]
    }))
    setUrl("")
  }

  return (
    <details className="context-editor panel">
      <summary>
        <span className="panel-title">Project context</span>
        <span className="panel-summary">{context.projectId} · {context.mediaAssets.length} asset{context.mediaAssets.length === 1 ? "" : "s"}</span>
      </summary>
      <div className="context-fields">
        <label htmlFor={`${id}-project`}>Project</label>
        <input
          id={`${id}-project`}
          value={project}
          aria-invalid={project.trim() === "" || undefined}
          aria-describedby={project.trim() === "" ? `${id}-project-error` : undefined}
          onChange={(event) => {
            setProject(event.target.value)
            if (event.target.value.trim() !== "") update((current) => ({ ...current, projectId: event.target.value.trim() }))
          }}
        />
        {project.trim() === "" ? <p id={`${id}-project-error`} className="form-error">A project is needed; the last one stays until then.</p> : null}
        <label htmlFor={`${id}-scene`}>Active scene</label>
        <input
          id={`${id}-scene`}
          value={context.activeSceneId ?? ""}
          placeholder="none"
          onChange={(event) => update((current) => ({ ...current, activeSceneId: event.target.value === "" ? null : event.target.value }))}
        />
        <label htmlFor={`${id}-time`}>Playback time (seconds)</label>
        <input
          id={`${id}-time`}
          type="number"
          min={0}
          step={0.1}
          inputMode="decimal"
          value={context.playbackTimeMs / 1000}
          onChange={(event) => {
            const seconds = event.target.valueAsNumber
            if (Number.isFinite(seconds) && seconds >= 0) update((current) => ({ ...current, playbackTimeMs: Math.round(seconds * 1000) }))
          }}
        />
      </div>
      <h3 className="assets-title">Media assets</h3>
      {context.mediaAssets.length === 0
        ? <p className="muted">None yet.</p>
        : <ul className="assets">{context.mediaAssets.map((asset) => <AssetEditor key={asset.id} asset={asset} />)}</ul>}
      <div className="asset-add">
        <label htmlFor={`${id}-add-file`}>Add a media file</label>
        <input id={`${id}-add-file`} type="file" accept="video/*,audio/*,image/*" multiple onChange={addFile} />
      </div>
      <form className="asset-add" onSubmit={addUrl} noValidate>
        <label htmlFor={`${id}-add-url`}>Add a media URL</label>
        <div className="inline">
          <input
            id={`${id}-add-url`}
            value={url}
            inputMode="url"
            placeholder="https://…"
            aria-invalid={urlError === undefined ? undefined : true}
            aria-describedby={urlError === undefined ? undefined : `${id}-url-error`}
            onChange={(event) => setUrl(event.target.value)}
          />
          <button type="submit" className="secondary">Add</button>
        </div>
        {urlError === undefined ? null : <p id={`${id}-url-error`} className="form-error">{urlError}</p>}
      </form>
    </details>
  )
}
