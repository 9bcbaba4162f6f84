import { useState } from "preact/hooks"
import { listProviderKeys, removeProviderKey, setProviderKey } from "../api/console"
import type { ProviderKey, WorkspaceRef } from "../api/types"
import { ConfirmDialog } from "../components/ConfirmDialog"
import { Field } from "../components/Field"
import { ErrorNote, LoadFailed, Loading } from "../components/Notice"
import { formatTime } from "../lib/dates"
import { useAction, useLoad } from "../lib/useLoad"

/**
 * The workspace's own provider keys (admins): set, replace, remove. A key is checked with the provider
 * before it is saved and never shown again, only its last four characters.
 */
export const ProviderKeys = ({ workspace }: { readonly workspace: WorkspaceRef }) => {
  const [keys, reload] = useLoad(() => listProviderKeys(workspace.id), [workspace.id])
  const [removing, setRemoving] = useState<ProviderKey | null>(null)
  const remove = useAction((key: ProviderKey) => removeProviderKey(workspace.id, key.provider))
  return (
    <>
      <h2>Provider keys</h2>
      <p class="hint">
        With its own key for a provider, every request of this workspace to that provider goes upstream with that key (and is
        billed by the provider to you). A key is checked with the provider when saved, stored encrypted, and never shown again.
      </p>
      {keys.state === "loading" ? <Loading /> : null}
      {keys.state === "failed" ? <LoadFailed error={keys.error} onRetry={reload} /> : null}
      {keys.state === "ready"
        ? keys.value.data.map((key) => (
          <ProviderKeyCard key={key.provider} workspaceId={workspace.id} providerKey={key} onChanged={reload} onRemove={setRemoving} />
        ))
        : null}
      <ErrorNote error={remove.error} />
      {removing === null ? null : (
        <ConfirmDialog
          title={`Remove the ${removing.provider} key?`}
          confirmLabel="Remove"
          busy={remove.running}
          onCancel={() => setRemoving(null)}
          onConfirm={async () => {
            await remove.run(removing)
            setRemoving(null)
            reload()
          }}
        >
          <p>Requests of this workspace to {removing.provider} go with the service's own key again, within a second.</p>
        </ConfirmDialog>
      )}
    </>
  )
}

const ProviderKeyCard = ({ workspaceId, providerKey, onChanged, onRemove }: {
  readonly workspaceId: string
  readonly providerKey: ProviderKey
  readonly onChanged: () => void
  readonly onRemove: (key: ProviderKey) => void
}) => {
  const [apiKey, setApiKey] = useState("")
  const save = useAction(setProviderKey)
  return (
    <form
      class="card"
      aria-label={`${providerKey.provider} key`}
      onSubmit={async (event) => {
        event.preventDefault()
        const saved = await save.run(workspaceId, providerKey.provider, apiKey.trim())
        if (saved !== undefined) {
          setApiKey("")
          onChanged()
        }
      }}
    >
      <h3>{providerKey.provider}</h3>
      {providerKey.set
        ? (
          <dl class="facts">
            <div><dt>Key</dt><dd><code>…{providerKey.last4}</code></dd></div>
            <div><dt>Added</dt><dd>{providerKey.createdAt === null ? "" : formatTime(providerKey.createdAt)} by {providerKey.createdBy}</dd></div>
            <div><dt>Last used</dt><dd>{providerKey.lastUsedAt === null ? "Never" : formatTime(providerKey.lastUsedAt)}</dd></div>
            {providerKey.lastError === null ? null : <div><dt>Last error</dt><dd class="field-error">{providerKey.lastError}</dd></div>}
          </dl>
        )
        : <p class="hint">No key: requests go with the service's own key.</p>}
      <Field
        label={providerKey.set ? `Replace the ${providerKey.provider} key` : `${providerKey.provider} key`}
        type="password"
        autoComplete="off"
        value={apiKey}
        onInput={setApiKey}
      />
      <ErrorNote error={save.error} />
      <div class="actions">
        <button type="submit" disabled={save.running || apiKey.trim() === ""}>{save.running ? "Checking…" : "Check and set key"}</button>
        {providerKey.set
          ? <button type="button" class="danger" onClick={() => onRemove(providerKey)}>Remove</button>
          : null}
      </div>
    </form>
  )
}

/** For everyone in the workspace: which providers it brings its own key for (nothing more). */
export const ProviderKeyStatus = ({ workspace }: { readonly workspace: WorkspaceRef }) => {
  const [keys] = useLoad(() => listProviderKeys(workspace.id), [workspace.id])
  if (keys.state !== "ready") return null
  return (
    <p class="hint" data-testid="provider-key-status">
      {keys.value.data.map((key) => `${key.provider}: ${key.set ? "the workspace's own key" : "the service's key"}`).join(" · ")}
    </p>
  )
}
