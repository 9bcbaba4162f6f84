import { useState } from "preact/hooks"
import { addDays, isDate, todayIn } from "../lib/dates"
import { Field } from "./Field"

/** Inclusive local dates, as people pick them; callers make `to` exclusive for the API. */
export interface Range {
  readonly from: string
  readonly to: string
}

/** The last 30 days, today included. */
export const defaultRange = (timeZone: string): Range => {
  const today = todayIn(timeZone)
  return { from: addDays(today, -29), to: today }
}

const presets: ReadonlyArray<readonly [number, string]> = [[7, "Last 7 days"], [30, "Last 30 days"], [90, "Last 90 days"]]

/** From and To dates with quick presets; applied with the Apply button so typing does not reload charts. */
export const DateRange = ({ value, onChange, timeZone }: { readonly value: Range; readonly onChange: (range: Range) => void; readonly timeZone: string }) => {
  const [from, setFrom] = useState(value.from)
  const [to, setTo] = useState(value.to)
  const invalid = !isDate(from) || !isDate(to) || from > to
  const apply = (range: Range): void => {
    setFrom(range.from)
    setTo(range.to)
    onChange(range)
  }
  return (
    <form
      class="range"
      onSubmit={(event) => {
        event.preventDefault()
        if (!invalid) onChange({ from, to })
      }}
    >
      <Field label="From" type="date" value={from} onInput={setFrom} required />
      <Field label="To" type="date" value={to} onInput={setTo} required />
      <button type="submit" disabled={invalid}>Apply</button>
      <span class="presets">
        {presets.map(([days, label]) => (
          <button type="button" class="secondary" key={days} onClick={() => {
            const today = todayIn(timeZone)
            apply({ from: addDays(today, 1 - days), to: today })
          }}>{label}</button>
        ))}
      </span>
    </form>
  )
}
