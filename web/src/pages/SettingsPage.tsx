import { useEffect, useId, useMemo, useState } from "preact/hooks"
import { MODEL_CATALOG, type ModelFamily } from "../../../src/domain/models"
import { type ProviderId, providerIds } from "../../../src/domain/providerId"
import { getSettings, saveSettings } from "../api/console"
import type { ConsoleSettings, RateLimitReading, SettingsPatch, WorkspaceRef } from "../api/types"
import { BudgetFields, budgetOf, draftOf } from "../components/BudgetFields"
import { Checkbox, Select } from "../components/Field"
import { Empty, ErrorNote, LoadFailed, Loading } from "../components/Notice"
import { timeZones } from "../lib/dates"
import { formatCount } from "../lib/format"
import { useAction, useLoad } from "../lib/useLoad"
import { ProviderKeys } from "./ProviderKeys"
import { Webhooks } from "./Webhooks"

const familyNames: { readonly [F in ModelFamily]: string } = {
  chat_completions: "chat completions",
  embeddings: "embeddings",
  messages: "messages",
  fim: "FIM"
}

/** Every provider with what it serves, from the catalog: "provider_a (chat completions, embeddings)". */
const providers = providerIds.map((provider) => {
  const served = new Set(MODEL_CATALOG.filter((model) => model.provider === provider).map((model) => familyNames[model.family]))
  return [provider, `${provider} (${[...served].join(", ")})`] as const
})

export const SettingsPage = ({ workspace }: { readonly workspace: WorkspaceRef }) => {
  const [settings, reload] = useLoad(() => getSettings(workspace.id), [workspace.id])
  // The answer of a save is the new settings: shown without reloading, so the form (and its "Saved.") stays.
  const [saved, setSaved] = useState<ConsoleSettings | null>(null)
  const current = saved ?? (settings.state === "ready" ? settings.value : null)
  return (
    <section>
      <h1>Settings</h1>
      {settings.state === "loading" ? <Loading /> : null}
      {settings.state === "failed" ? <LoadFailed error={settings.error} onRetry={reload} /> : null}
      {current === null ? null : <SettingsForm workspaceId={workspace.id} settings={current} onSaved={setSaved} />}
      {current === null ? null : <ProviderKeys workspace={workspace} />}
      {current === null ? null : <Webhooks workspace={workspace} />}
      {current === null ? null : <RateLimits settings={current} />}
    </section>
  )
}

const modelText = (models: ReadonlyArray<string> | undefined): string => (models ?? []).join("\n")
const modelList = (text: string): Array<string> => text.split(/[\n,]/).map((m) => m.trim()).filter((m) => m !== "")

const SettingsForm = ({ workspaceId, settings, onSaved }: {
  readonly workspaceId: string
  readonly settings: ConsoleSettings
  readonly onSaved: (settings: ConsoleSettings) => void
}) => {
  const zones = useMemo(() => timeZones().map((zone) => ({ value: zone, label: zone })), [])
  const [anonymizeUsers, setAnonymizeUsers] = useState(settings.anonymizeUsers)
  const [leaderboardsEnabled, setLeaderboardsEnabled] = useState(settings.leaderboardsEnabled)
  const [workflowsEnabled, setWorkflowsEnabled] = useState(settings.workflowsEnabled)
  const [timezone, setTimezone] = useState(settings.timezone)
  const [budgetDraft, setBudgetDraft] = useState(() => draftOf(settings.budget))
  const budget = budgetOf(budgetDraft, settings.budget)
  const [byok, setByok] = useState<Record<ProviderId, string>>(
    () => Object.fromEntries(providerIds.map((provider) => [provider, modelText(settings.byokModels[provider])])) as Record<ProviderId, string>
  )
  const [saved, setSaved] = useState(false)
  const save = useAction(saveSettings)
  useEffect(() => setSaved(false), [anonymizeUsers, leaderboardsEnabled, workflowsEnabled, timezone, byok, budgetDraft])
  return (
    <form
      class="card"
      onSubmit={async (event) => {
        event.preventDefault()
        // An emptied list is left out rather than sent empty: an empty list would allow no model at all.
        const byokModels = Object.fromEntries(
          providers.map(([provider]) => [provider, modelList(byok[provider])] as const).filter(([, list]) => list.length > 0)
        )
        // Only what changed is sent, so the audit log names the settings really changed.
        const patch: SettingsPatch = {
          ...(anonymizeUsers === settings.anonymizeUsers ? {} : { anonymizeUsers }),
          ...(leaderboardsEnabled === settings.leaderboardsEnabled ? {} : { leaderboardsEnabled }),
          ...(workflowsEnabled === settings.workflowsEnabled ? {} : { workflowsEnabled }),
          ...(timezone === settings.timezone ? {} : { timezone }),
          ...(JSON.stringify(byokModels) === JSON.stringify(settings.byokModels) ? {} : { byokModels }),
          ...(budget === undefined || JSON.stringify(budget) === JSON.stringify(settings.budget) ? {} : { budget })
        }
        const answer = await save.run(workspaceId, patch)
        if (answer !== undefined) {
          onSaved(answer)
          setSaved(true)
        }
      }}
    >
      <fieldset>
        <legend>Privacy</legend>
        <Checkbox label="Anonymize users in exports" checked={anonymizeUsers} onChange={setAnonymizeUsers}
          hint="User ids, emails and names become stable pseudonyms." />
        <Checkbox label="Leaderboards enabled" checked={leaderboardsEnabled} onChange={setLeaderboardsEnabled}
          hint="Without leaderboards, user columns of exports stay empty." />
      </fieldset>
      <fieldset>
        <legend>Workflows</legend>
        <Checkbox label="Workflows enabled" checked={workflowsEnabled} onChange={setWorkflowsEnabled} />
      </fieldset>
      <fieldset>
        <legend>Time zone</legend>
        <Select label="Workspace time zone" value={timezone} options={zones} onChange={setTimezone} />
        <p class="hint">The overview counts days, and the budget its periods, in this zone.</p>
      </fieldset>
      <BudgetFields
        legend="Workspace budget"
        draft={budgetDraft}
        onChange={setBudgetDraft}
        hint="Requests are refused (429) once this period's spend and the requests in progress would pass it. Periods follow the workspace time zone. Empty: no budget."
      />
      <fieldset>
        <legend>Models with your own provider keys (BYOK)</legend>
        <p class="hint">One model per line. When set, the list replaces the catalog of that provider for this workspace.</p>
        {providers.map(([provider, label]) => (
          <ModelsField key={provider} label={label} value={byok[provider]} onInput={(text) => setByok({ ...byok, [provider]: text })} />
        ))}
      </fieldset>
      <ErrorNote error={save.error} />
      <button type="submit" disabled={save.running || budget === undefined}>Save</button>
      {saved ? <span class="hint" role="status"> Saved.</span> : null}
    </form>
  )
}

const ModelsField = ({ label, value, onInput }: { readonly label: string; readonly value: string; readonly onInput: (text: string) => void }) => {
  const id = useId()
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea id={id} rows={3} value={value} onInput={(event) => onInput(event.currentTarget.value)} />
    </div>
  )
}

/** A limit of 0 or none reported is shown as a dash: that family is not limited on that measure. */
const number = (value: number | null): string => (value === null || value === 0 ? "—" : formatCount(value))

const RateLimits = ({ settings }: { readonly settings: ConsoleSettings }) => {
  const readings: ReadonlyArray<RateLimitReading> = settings.limits ?? []
  return (
    <>
      <h2>Rate limits</h2>
      <p class="hint">Per minute, set by the operator (read-only here); “remaining now” is what is left of the current minute.</p>
      {readings.length === 0 ? <Empty>No rate limits are reported for this workspace.</Empty> : (
        <div class="table-scroll" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">Family</th><th scope="col">Model</th><th scope="col">Requests / min</th><th scope="col">Remaining now</th>
                <th scope="col">Tokens / min</th><th scope="col">Remaining now</th>
              </tr>
            </thead>
            <tbody>
              {readings.map((r) => (
                <tr key={`${r.family}/${r.model ?? ""}`}>
                  <th scope="row">{r.family}</th><td>{r.model ?? "all"}</td>
                  <td>{number(r.requestsPerMinute)}</td><td>{number(r.remainingRequests)}</td>
                  <td>{number(r.tokensPerMinute)}</td><td>{number(r.remainingTokens)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  )
}
