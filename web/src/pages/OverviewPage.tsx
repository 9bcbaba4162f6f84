import { useMemo, useState } from "preact/hooks"
import { getActivity, getBudget, getSettings, getUsage } from "../api/console"
import type { GroupBy, WorkspaceRef } from "../api/types"
import { BudgetBar } from "../components/BudgetFields"
import { Chart } from "../components/Chart"
import { DateRange, defaultRange, type Range } from "../components/DateRange"
import { Select } from "../components/Field"
import { Empty, LoadFailed, Loading } from "../components/Notice"
import { addDays, daysOf } from "../lib/dates"
import { formatCount, formatUsd } from "../lib/format"
import { useLoad } from "../lib/useLoad"
import { measures, seriesOf, total } from "./usageSeries"

const groupOptions: ReadonlyArray<{ readonly value: GroupBy; readonly label: string }> = [
  { value: "model", label: "Model" },
  { value: "apiKey", label: "API key" },
  { value: "family", label: "API family" },
  { value: "byok", label: "Provider key (own or the service's)" }
]

/** The workspace's zone for admins (from its settings); members cannot read settings, so the server's default applies. */
const useTimeZone = (workspace: WorkspaceRef): string | undefined => {
  const [settings] = useLoad(() => (workspace.role === "admin" ? getSettings(workspace.id) : Promise.resolve(null)), [workspace.id])
  return settings.state === "ready" ? settings.value?.timezone : undefined
}

/** Requests, tokens and cost per day of the workspace's API traffic, and its platform activity. */
export const OverviewPage = ({ workspace }: { readonly workspace: WorkspaceRef }) => {
  const timezone = useTimeZone(workspace)
  const [range, setRange] = useState<Range>(() => defaultRange(timezone ?? "UTC"))
  const [groupBy, setGroupBy] = useState<GroupBy>("model")
  const query = { from: range.from, to: addDays(range.to, 1), timezone: timezone ?? "" }
  const [usage, reloadUsage] = useLoad(() => getUsage(workspace.id, query, groupBy), [workspace.id, range, groupBy, timezone])
  const [activity, reloadActivity] = useLoad(() => getActivity(workspace.id, query), [workspace.id, range, timezone])
  const days = useMemo(() => daysOf(query.from, query.to), [query.from, query.to])

  return (
    <section>
      <h1>Overview</h1>
      <p class="lead">
        Traffic of this workspace's API keys, per day in {timezone === undefined ? "the workspace's time zone" : timezone}.
      </p>
      <WorkspaceBudget workspace={workspace} />
      <div class="toolbar">
        <DateRange value={range} onChange={setRange} timeZone={timezone ?? "UTC"} />
        <Select label="Break down by" value={groupBy} options={groupOptions} onChange={setGroupBy} />
      </div>
      {usage.state === "loading" ? <Loading /> : null}
      {usage.state === "failed" ? <LoadFailed error={usage.error} onRetry={reloadUsage} /> : null}
      {usage.state === "ready" ? (
        <>
          <dl class="totals" aria-label="Totals for the range">
            <div><dt>Requests</dt><dd data-total="requests">{formatCount(total(usage.value.data, measures.requests))}</dd></div>
            <div><dt>Tokens</dt><dd data-total="tokens">{formatCount(total(usage.value.data, measures.tokens))}</dd></div>
            <div><dt>Cost</dt><dd data-total="cost">{formatUsd(total(usage.value.data, measures.cost))}</dd></div>
          </dl>
          {usage.value.data.length === 0 ? (
            <Empty>No API requests in this range. Create an API key and point a client library at the service to see traffic here.</Empty>
          ) : (
            <div class="charts">
              <Chart title="Requests per day" days={days} series={seriesOf(usage.value.data, days, measures.requests)} format={formatCount} />
              <Chart title="Tokens per day" days={days} series={seriesOf(usage.value.data, days, measures.tokens)} format={formatCount} />
              <Chart title="Cost per day" days={days} series={seriesOf(usage.value.data, days, measures.cost)} format={formatUsd} />
            </div>
          )}
        </>
      ) : null}
      <h2>Platform activity</h2>
      {activity.state === "loading" ? <Loading /> : null}
      {activity.state === "failed" ? (
        activity.error.status === 404 ? <Empty>Platform activity is not available for this workspace.</Empty> : <LoadFailed error={activity.error} onRetry={reloadActivity} />
      ) : null}
      {activity.state === "ready" ? (
        activity.value.data.length === 0 ? <Empty>No platform messages in this range.</Empty> : (
          <div class="charts">
            <Chart
              title="Messages per day"
              days={days}
              series={[{ label: "Messages", values: days.map((day) => activity.value.data.find((row) => row.day === day)?.messages ?? 0) }]}
              format={formatCount}
            />
            <Chart
              title="Active users per day"
              days={days}
              series={[{ label: "Active users", values: days.map((day) => activity.value.data.find((row) => row.day === day)?.activeUsers ?? 0) }]}
              format={formatCount}
            />
          </div>
        )
      ) : null}
    </section>
  )
}

/** The workspace's budget in its current period, when it has one (set by admins in Settings). */
const WorkspaceBudget = ({ workspace }: { readonly workspace: WorkspaceRef }) => {
  const [status, reload] = useLoad(() => getBudget(workspace.id), [workspace.id])
  if (status.state === "loading") return null
  if (status.state === "failed") return <LoadFailed error={status.error} onRetry={reload} />
  const { budget } = status.value
  if (budget === null) {
    return workspace.role === "admin" ? <p class="hint">No budget: spend is not capped. An admin can set one in Settings.</p> : null
  }
  return <BudgetBar status={{ ...status.value, budget }} />
}
