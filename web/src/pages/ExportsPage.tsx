import { useMemo, useState } from "preact/hooks"
import { listRecentExports, runExport } from "../api/console"
import type { ExportData, UsageExportDataType, WorkspaceRef } from "../api/types"
import { Field, Select } from "../components/Field"
import { Empty, ErrorNote, LoadFailed, Loading } from "../components/Notice"
import { addDays, formatTime, isDate, timeZones, todayIn } from "../lib/dates"
import { formatCount } from "../lib/format"
import { useAction, useLoad } from "../lib/useLoad"

const dataTypes: ReadonlyArray<{ readonly value: UsageExportDataType; readonly label: string }> = [
  { value: "users", label: "Users" },
  { value: "assistants", label: "Assistants" },
  { value: "workflows", label: "Workflows" },
  { value: "projects", label: "Projects" },
  { value: "models", label: "Models" }
]

/**
 * Runs a usage export (the public export's rules) and lists the workspace's exports while their links work, as the
 * server records them: every admin sees the same list, whoever ran an export and wherever.
 */
export const ExportsPage = ({ workspace }: { readonly workspace: WorkspaceRef }) => {
  const zones = useMemo(() => timeZones().map((zone) => ({ value: zone, label: zone })), [])
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone
  const [dataType, setDataType] = useState<UsageExportDataType>("users")
  const [timezone, setTimezone] = useState(zones.some((z) => z.value === browserZone) ? browserZone : "UTC")
  const [from, setFrom] = useState(() => addDays(todayIn(timezone), -30))
  const [to, setTo] = useState(() => todayIn(timezone))
  const [result, setResult] = useState<ExportData | null>(null)
  const [recent, reloadRecent] = useLoad(() => listRecentExports(workspace.id), [workspace.id])
  const exporting = useAction(runExport)
  const invalid = !isDate(from) || !isDate(to) || from > to
  return (
    <section>
      <h1>Exports</h1>
      <p class="lead">Usage as a CSV file, cut into local days of the chosen time zone. The period runs from the start of From to the end of To.</p>
      <form
        class="card"
        onSubmit={async (event) => {
          event.preventDefault()
          setResult(null)
          // To is inclusive here; the export's end is the next midnight, exclusive.
          const answer = await exporting.run(
            workspace.id,
            dataType,
            { date: `${from}T00:00:00`, timezone },
            { date: `${addDays(to, 1)}T00:00:00`, timezone }
          )
          if (answer !== undefined) {
            setResult(answer.data)
            reloadRecent()
          }
        }}
      >
        <div class="row">
          <Select label="Data type" value={dataType} options={dataTypes} onChange={setDataType} />
          <Select label="Time zone" value={timezone} options={zones} onChange={setTimezone} />
        </div>
        <div class="row">
          <Field label="From" type="date" value={from} onInput={setFrom} required />
          <Field label="To" type="date" value={to} onInput={setTo} required />
        </div>
        <ErrorNote error={exporting.error?.status === 404 ? null : exporting.error} />
        {exporting.error?.status === 404 ? <p class="empty" role="alert">{exporting.error.message || "No data in this period."}</p> : null}
        <button type="submit" disabled={exporting.running || invalid}>{exporting.running ? "Running export…" : "Run export"}</button>
        {exporting.running ? <p role="status" class="running"><span class="spinner" aria-hidden="true" />Running the {dataType} export…</p> : null}
      </form>
      {result === null ? null : <ExportResult result={result} />}
      <h2>Recent exports</h2>
      {recent.state === "loading" ? <Loading /> : null}
      {recent.state === "failed" ? <LoadFailed error={recent.error} onRetry={reloadRecent} /> : null}
      {recent.state === "ready" && recent.value.data.length === 0
        ? <Empty>No exports with a working link. Links expire; run an export again to get a fresh one.</Empty>
        : null}
      {recent.state === "ready" && recent.value.data.length > 0 ? (
        <div class="table-scroll" tabIndex={0}>
          <table aria-label="Recent exports">
            <thead>
              <tr>
                <th scope="col">Data type</th><th scope="col">Period</th><th scope="col">Records</th><th scope="col">Run by</th>
                <th scope="col">Link expires</th><th scope="col"><span class="visually-hidden">Download</span></th>
              </tr>
            </thead>
            <tbody>
              {recent.value.data.map((item) => (
                <tr key={item.id}>
                  <th scope="row">{item.dataType}</th>
                  <td>{item.dateRange.from} – {item.dateRange.to}<br /><span class="hint">{item.timezone}</span></td>
                  <td>{formatCount(item.recordCount)}</td>
                  <td>{item.createdBy}<br /><span class="hint">{formatTime(item.createdAt)}</span></td>
                  <td class="nowrap">{formatTime(item.expiresAt)}</td>
                  <td><a class="button secondary small" href={item.downloadUrl} download>Download<span class="visually-hidden"> {item.dataType} export</span></a></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  )
}

const ExportResult = ({ result }: { readonly result: ExportData }) => (
  <div class="card success" role="region" aria-label="Export result">
    <h2>Export ready</h2>
    <dl class="facts">
      <div><dt>Records</dt><dd data-testid="record-count">{formatCount(result.recordCount)}</dd></div>
      <div><dt>From</dt><dd>{result.dateRange.from}</dd></div>
      <div><dt>To</dt><dd>{result.dateRange.to}</dd></div>
      <div><dt>File</dt><dd><code>{result.filePath}</code></dd></div>
    </dl>
    <a class="button" href={result.downloadUrl} download>Download CSV</a>
  </div>
)
