import { listUpstreams } from "../api/console"
import type { UpstreamDeployment } from "../api/types"
import { Empty, LoadFailed, Loading } from "../components/Notice"
import { formatClock } from "../lib/dates"
import { formatCount } from "../lib/format"
import { usePolled } from "../lib/usePolled"

/** Often enough to see a cooldown (30 s by default) start and end. */
const refreshEveryMs = 10_000

/** Available, or cooling with the time it is tried again: in words, not only in colour. */
const StateBadge = ({ deployment }: { readonly deployment: UpstreamDeployment }) =>
  deployment.state === "available" ? <span class="badge ok">Available</span> : (
    <>
      <span class="badge warn">Cooling</span>
      {deployment.coolingUntil === undefined ? null : (
        <> <time class="nowrap" dateTime={deployment.coolingUntil}>until {formatClock(deployment.coolingUntil)}</time></>
      )}
    </>
  )

/** The operator's view of every upstream deployment, as this instance of the service sees it. */
export const UpstreamsPage = () => {
  const upstreams = usePolled(listUpstreams, refreshEveryMs)
  const list = upstreams.value?.data
  const cooling = list?.filter((d) => d.state === "cooling").length ?? 0
  return (
    <section>
      <h1>Upstreams</h1>
      <p class="lead">
        Every deployment of every route, as this instance of the service sees it: requests and failures since it started.
        A cooling deployment is skipped until its time is up, unless every deployment of its route is cooling.
      </p>
      <div class="toolbar centered">
        <button type="button" class="secondary" onClick={upstreams.refresh}>Refresh</button>
        <p class="hint" data-testid="upstreams-updated">
          {upstreams.loadedAt === null ? "Refreshed every 10 seconds." : `Updated ${formatClock(upstreams.loadedAt)}; refreshed every 10 seconds.`}
        </p>
      </div>
      {list === undefined && upstreams.error === null ? <Loading /> : null}
      {list === undefined && upstreams.error !== null ? <LoadFailed error={upstreams.error} onRetry={upstreams.refresh} /> : null}
      {/* A failed refresh leaves the last answer on screen, saying how old it is. */}
      {list !== undefined && upstreams.error !== null ? (
        <p class="error" role="alert">
          Could not refresh{upstreams.loadedAt === null ? "" : ` (the table is from ${formatClock(upstreams.loadedAt)})`}: {upstreams.error.message}
        </p>
      ) : null}
      {list !== undefined && list.length === 0 ? <Empty>No upstream deployments are configured.</Empty> : null}
      {list !== undefined && list.length > 0 ? (
        <>
          <p data-testid="upstreams-summary">
            {list.length === 1 ? "1 deployment" : `${list.length} deployments`}, {cooling === 0 ? "none cooling" : `${cooling} cooling`}.
          </p>
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Upstream deployments">
            <table>
              <thead>
                <tr>
                  <th scope="col">Route</th><th scope="col">Deployment</th><th scope="col">Kind</th><th scope="col">State</th>
                  <th scope="col">Last error</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Failures</th>
                </tr>
              </thead>
              <tbody>
                {list.map((deployment) => (
                  <tr key={deployment.deployment} class={deployment.state}>
                    <td class="nowrap"><code>{deployment.route}</code></td>
                    <th scope="row" class="nowrap">{deployment.deployment}</th>
                    <td>{deployment.kind}</td>
                    <td class="nowrap"><StateBadge deployment={deployment} /></td>
                    <td>{deployment.lastError ?? "—"}</td>
                    <td class="num">{formatCount(deployment.requests)}</td>
                    <td class="num">{formatCount(deployment.failures)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </section>
  )
}
