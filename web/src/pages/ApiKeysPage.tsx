import { useState } from "preact/hooks"
import { createApiKey, listApiKeys, revokeApiKey } from "../api/console"
import type { ApiKey, CreatedApiKey, Scope, WorkspaceRef } from "../api/types"
import { ConfirmDialog } from "../components/ConfirmDialog"
import { CopyButton } from "../components/CopyButton"
import { BudgetFields, budgetOf, draftOf } from "../components/BudgetFields"
import { Checkbox, Field } from "../components/Field"
import { Empty, ErrorNote, LoadFailed, Loading } from "../components/Notice"
import { formatTime } from "../lib/dates"
import { formatUsd } from "../lib/format"
import { useAction, useLoad } from "../lib/useLoad"

/** A day, without the time: what fits a table cell. */
const formatDate = (iso: string): string => new Date(iso).toLocaleDateString(undefined, { dateStyle: "medium" })

const scopeLabels: Readonly<Record<Scope, string>> = {
  COMPLETION_API: "COMPLETION_API — chat completions, messages, FIM, embeddings",
  USAGE_EXPORT_API: "USAGE_EXPORT_API — usage exports"
}

/** Only admins may create export keys (the server refuses a member's request too). */
const scopesFor = (workspace: WorkspaceRef): ReadonlyArray<Scope> =>
  workspace.role === "admin" ? ["COMPLETION_API", "USAGE_EXPORT_API"] : ["COMPLETION_API"]

export const ApiKeysPage = ({ workspace }: { readonly workspace: WorkspaceRef }) => {
  const [keys, reload] = useLoad(() => listApiKeys(workspace.id), [workspace.id])
  const [created, setCreated] = useState<CreatedApiKey | null>(null)
  const [revoking, setRevoking] = useState<ApiKey | null>(null)
  const revoke = useAction((key: ApiKey) => revokeApiKey(workspace.id, key.id))
  return (
    <section>
      <h1>API keys</h1>
      <p class="lead">
        {workspace.role === "admin"
          ? "Keys of this workspace. A key is shown once, when it is created; only its prefix is kept visible."
          : "Your keys in this workspace. A key is shown once, when it is created."}
      </p>
      {created === null
        ? <CreateKeyForm workspace={workspace} onCreated={(key) => {
          setCreated(key)
          reload()
        }} />
        : <NewKey created={created} onDone={() => setCreated(null)} />}
      <h2>Keys</h2>
      {keys.state === "loading" ? <Loading /> : null}
      {keys.state === "failed" ? <LoadFailed error={keys.error} onRetry={reload} /> : null}
      {keys.state === "ready" && keys.value.data.length === 0 ? <Empty>No API keys yet. Create one above.</Empty> : null}
      {keys.state === "ready" && keys.value.data.length > 0 ? <KeyTable keys={keys.value.data} onRevoke={setRevoking} /> : null}
      <ErrorNote error={revoke.error} />
      {revoking === null ? null : (
        <ConfirmDialog
          title={`Revoke the key “${revoking.name}”?`}
          confirmLabel="Revoke"
          busy={revoke.running}
          onCancel={() => setRevoking(null)}
          onConfirm={async () => {
            await revoke.run(revoking)
            setRevoking(null)
            reload()
          }}
        >
          <p>Applications using <code>{revoking.displayPrefix}</code> get 401 within a second. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </section>
  )
}

const CreateKeyForm = ({ workspace, onCreated }: {
  readonly workspace: WorkspaceRef
  readonly onCreated: (key: CreatedApiKey) => void
}) => {
  const [name, setName] = useState("")
  const [scopes, setScopes] = useState<ReadonlyArray<Scope>>(["COMPLETION_API"])
  const [budgetDraft, setBudgetDraft] = useState(() => draftOf(null))
  const [expiry, setExpiry] = useState("")
  const budget = budgetOf(budgetDraft)
  // The browser's local time, as the field shows it; sent as an instant.
  const expiresAt = expiry === "" ? null : new Date(expiry)
  const expiryError = expiresAt !== null && !(expiresAt.getTime() > Date.now()) ? "A time in the future, or empty for none." : undefined
  const create = useAction(createApiKey)
  return (
    <form
      class="card"
      onSubmit={async (event) => {
        event.preventDefault()
        const limits = {
          ...(budget === null || budget === undefined ? {} : { budget }),
          ...(expiresAt === null ? {} : { expiresAt: expiresAt.toISOString() })
        }
        const key = await create.run(workspace.id, name.trim(), scopes, limits)
        if (key !== undefined) {
          setName("")
          setBudgetDraft(draftOf(null))
          setExpiry("")
          onCreated(key)
        }
      }}
    >
      <h2>Create a key</h2>
      <Field label="Name" value={name} onInput={setName} required hint="What uses it, e.g. “billing-service”." />
      <fieldset>
        <legend>Scopes</legend>
        {scopesFor(workspace).map((scope) => (
          <Checkbox
            key={scope}
            label={scopeLabels[scope]}
            checked={scopes.includes(scope)}
            onChange={(on) => setScopes(on ? [...scopes, scope] : scopes.filter((s) => s !== scope))}
          />
        ))}
      </fieldset>
      <BudgetFields
        legend="Budget (optional)"
        draft={budgetDraft}
        onChange={setBudgetDraft}
        hint="The most this key may spend per period; its requests are refused (429) beyond it. Empty: only the workspace's budget applies."
      />
      <Field label="Expires (optional, your local time)" type="datetime-local" value={expiry} onInput={setExpiry}
        hint="After this time the key is refused (401) like a revoked one." error={expiryError} />
      <ErrorNote error={create.error} />
      <button type="submit" disabled={create.running || scopes.length === 0 || name.trim() === "" || budget === undefined || expiryError !== undefined}>
        Create key
      </button>
    </form>
  )
}

/** The new key, once: it is never shown again. */
const NewKey = ({ created, onDone }: { readonly created: CreatedApiKey; readonly onDone: () => void }) => (
  <div class="card success" role="region" aria-label="New API key">
    <h2>Key “{created.name}” created</h2>
    <p>Copy it now: it is shown only this once.</p>
    <p><code class="secret" data-testid="new-key">{created.key}</code></p>
    <p><CopyButton text={created.key} label="Copy key" /></p>
    <button type="button" class="secondary" onClick={onDone}>Done</button>
  </div>
)

const statusOf = (key: ApiKey): string => {
  if (key.revokedAt !== null) return `Revoked ${formatTime(key.revokedAt)}`
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= Date.now()) return "Expired"
  return "Active"
}

const KeyTable = ({ keys, onRevoke }: { readonly keys: ReadonlyArray<ApiKey>; readonly onRevoke: (key: ApiKey) => void }) => (
  <div class="table-scroll" tabIndex={0}>
    <table>
      <thead>
        <tr>
          <th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Created by</th>
          <th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Limits</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <tr key={key.id} class={key.revokedAt === null ? "" : "revoked"}>
            <th scope="row">{key.name}</th>
            <td class="nowrap"><code>{key.displayPrefix}</code></td>
            <td>{key.scopes.map((scope) => <div key={scope}>{scope}</div>)}</td>
            <td>{key.createdBy}</td>
            <td>{formatTime(key.createdAt)}</td>
            <td>{key.lastUsedAt === null ? "Never" : formatTime(key.lastUsedAt)}</td>
            <td class="key-limits">
              {key.budget === null ? <div>No budget</div> : (
                <>
                  <div>{formatUsd(key.budget.amountUsd)}/{key.budget.period}</div>
                  <div class="hint">{key.spentUsd === null ? "spent: unknown now" : `${formatUsd(key.spentUsd)} spent`}</div>
                </>
              )}
              <div class="hint">{key.expiresAt === null ? "No expiry" : `Expires ${formatDate(key.expiresAt)}`}</div>
            </td>
            <td>{statusOf(key)}</td>
            <td>
              {key.revokedAt === null
                ? <button type="button" class="danger small" aria-label={`Revoke ${key.name}`} onClick={() => onRevoke(key)}>Revoke</button>
                : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
)
