import { useState } from "preact/hooks"
import { createWebhook, listWebhookDeliveries, listWebhooks, removeWebhook } from "../api/console"
import type { CreatedWebhook, Webhook, WorkspaceRef } from "../api/types"
import { ConfirmDialog } from "../components/ConfirmDialog"
import { CopyButton } from "../components/CopyButton"
import { Field } from "../components/Field"
import { Empty, ErrorNote, LoadFailed, Loading } from "../components/Notice"
import { formatTime } from "../lib/dates"
import { useAction, useLoad } from "../lib/useLoad"

/** A line's outcome; a pending line's time is when its attempt is due. */
const statusText = { pending: "Due", delivered: "Delivered", failed: "Failed", abandoned: "Failed: no more retries" } as const

/**
 * The workspace's webhooks (admins): add one (its signing secret shown this once), remove one, and read
 * each one's deliveries with their outcome.
 */
export const Webhooks = ({ workspace }: { readonly workspace: WorkspaceRef }) => {
  const [webhooks, reload] = useLoad(() => listWebhooks(workspace.id), [workspace.id])
  const [created, setCreated] = useState<CreatedWebhook | null>(null)
  const [removing, setRemoving] = useState<Webhook | null>(null)
  const remove = useAction((webhook: Webhook) => removeWebhook(workspace.id, webhook.id))
  return (
    <>
      <h2>Webhooks</h2>
      <p class="hint">
        Budget alerts (<code>budget.threshold_reached</code>) are sent to these URLs, signed per the Standard Webhooks
        specification and retried for more than a day when the receiver fails. URLs must be https and public.
      </p>
      {created === null
        ? <NewWebhookForm workspaceId={workspace.id} onCreated={(webhook) => {
          setCreated(webhook)
          reload()
        }} />
        : <NewSecret created={created} onDone={() => setCreated(null)} />}
      {webhooks.state === "loading" ? <Loading /> : null}
      {webhooks.state === "failed" ? <LoadFailed error={webhooks.error} onRetry={reload} /> : null}
      {webhooks.state === "ready" && webhooks.value.data.length === 0 ? <Empty>No webhooks yet.</Empty> : null}
      {webhooks.state === "ready"
        ? webhooks.value.data.map((webhook) => <WebhookCard key={webhook.id} workspaceId={workspace.id} webhook={webhook} onRemove={setRemoving} />)
        : null}
      <ErrorNote error={remove.error} />
      {removing === null ? null : (
        <ConfirmDialog
          title="Remove this webhook?"
          confirmLabel="Remove"
          busy={remove.running}
          onCancel={() => setRemoving(null)}
          onConfirm={async () => {
            await remove.run(removing)
            setRemoving(null)
            reload()
          }}
        >
          <p>Nothing more is sent to <code>{removing.url}</code>, pending retries included.</p>
        </ConfirmDialog>
      )}
    </>
  )
}

const NewWebhookForm = ({ workspaceId, onCreated }: { readonly workspaceId: string; readonly onCreated: (webhook: CreatedWebhook) => void }) => {
  const [url, setUrl] = useState("")
  const create = useAction(createWebhook)
  return (
    <form
      class="card"
      aria-label="Add a webhook"
      onSubmit={async (event) => {
        event.preventDefault()
        const webhook = await create.run(workspaceId, url.trim())
        if (webhook !== undefined) {
          setUrl("")
          onCreated(webhook)
        }
      }}
    >
      <Field
        label="Webhook URL"
        value={url}
        onInput={setUrl}
        required
        autoComplete="off"
        hint="https://… Loopback and private addresses are refused."
        error={create.error?.field === "url" ? create.error.message : undefined}
      />
      {create.error?.field === "url" ? null : <ErrorNote error={create.error} />}
      <div class="actions">
        <button type="submit" disabled={create.running || url.trim() === ""}>{create.running ? "Adding…" : "Add webhook"}</button>
      </div>
    </form>
  )
}

/** The signing secret, once: it is never shown again. */
const NewSecret = ({ created, onDone }: { readonly created: CreatedWebhook; readonly onDone: () => void }) => (
  <div class="card success" role="region" aria-label="New webhook">
    <h3>Webhook added</h3>
    <p>Its signing secret for <code>{created.url}</code>. Copy it now: it is shown only this once.</p>
    <p><code class="secret" data-testid="webhook-secret">{created.secret}</code></p>
    <p><CopyButton text={created.secret} label="Copy secret" /></p>
    <button type="button" class="secondary" onClick={onDone}>Done</button>
  </div>
)

const WebhookCard = ({ workspaceId, webhook, onRemove }: {
  readonly workspaceId: string
  readonly webhook: Webhook
  readonly onRemove: (webhook: Webhook) => void
}) => {
  const [deliveries, reload] = useLoad(() => listWebhookDeliveries(workspaceId, webhook.id), [workspaceId, webhook.id])
  return (
    <section class="card" aria-label={`Webhook ${webhook.url}`}>
      <h3><code>{webhook.url}</code></h3>
      <dl class="facts">
        <div><dt>Events</dt><dd>{webhook.events.join(", ")}</dd></div>
        <div><dt>Added</dt><dd>{formatTime(webhook.createdAt)}</dd></div>
      </dl>
      <h4>Deliveries</h4>
      {deliveries.state === "loading" ? <Loading /> : null}
      {deliveries.state === "failed" ? <LoadFailed error={deliveries.error} onRetry={reload} /> : null}
      {deliveries.state === "ready" && deliveries.value.data.length === 0 ? <Empty>Nothing sent yet.</Empty> : null}
      {deliveries.state === "ready" && deliveries.value.data.length > 0
        ? (
          <div class="table-scroll" tabIndex={0}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Time</th><th scope="col">Event</th><th scope="col">Attempt</th><th scope="col">Outcome</th>
                  <th scope="col">Receiver's status</th><th scope="col">Error</th>
                </tr>
              </thead>
              <tbody>
                {deliveries.value.data.map((line) => (
                  <tr key={`${line.eventId}-${line.attempt}-${line.status}`}>
                    <td class="nowrap">{formatTime(line.at)}</td>
                    <td><div>{line.type}</div><code class="hint">{line.eventId}</code></td>
                    <td>{line.attempt}</td>
                    <td class={line.status === "failed" || line.status === "abandoned" ? "failed" : ""}>{statusText[line.status]}</td>
                    <td>{line.responseStatus ?? "—"}</td>
                    <td>{line.error ?? ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
        : null}
      <div class="actions">
        <button type="button" class="secondary" onClick={reload}>Refresh deliveries</button>
        <button type="button" class="danger" onClick={() => onRemove(webhook)}>Remove</button>
      </div>
    </section>
  )
}
