import { listModels } from "../api/console"
import type { WorkspaceRef } from "../api/types"
import { Empty, LoadFailed, Loading } from "../components/Notice"
import { useLoad } from "../lib/useLoad"
import { ProviderKeyStatus } from "./ProviderKeys"

/** The models this workspace's keys may call (its BYOK lists where set), by provider. */
export const ModelsPage = ({ workspace }: { readonly workspace: WorkspaceRef }) => {
  const [models, reload] = useLoad(() => listModels(workspace.id), [workspace.id])
  return (
    <section>
      <h1>Models</h1>
      <p class="lead">What this workspace's API keys may call, by provider (its own model lists where it brings provider keys).</p>
      <ProviderKeyStatus workspace={workspace} />
      {models.state === "loading" ? <Loading /> : null}
      {models.state === "failed" ? <LoadFailed error={models.error} onRetry={reload} /> : null}
      {models.state === "ready" && models.value.data.length === 0 ? <Empty>No models are available to this workspace.</Empty> : null}
      {models.state === "ready" && models.value.data.length > 0 ? (
        <div class="table-scroll" tabIndex={0}>
          <table>
            <thead><tr><th scope="col">Model</th><th scope="col">Provider</th><th scope="col">API family</th></tr></thead>
            <tbody>
              {models.value.data.map((model) => (
                <tr key={`${model.provider}/${model.id}`}>
                  <th scope="row"><code>{model.id}</code></th><td>{model.provider}</td><td>{model.family}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  )
}
