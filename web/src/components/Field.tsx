import type { ComponentChildren } from "preact"
import { useId } from "preact/hooks"

interface FieldProps {
  readonly label: string
  readonly value: string
  readonly onInput: (value: string) => void
  readonly type?: "text" | "email" | "password" | "date" | "search" | "datetime-local"
  /** A keyboard for numbers on phones ("decimal"), where the value stays text. */
  readonly inputMode?: "decimal"
  readonly required?: boolean
  readonly minLength?: number
  readonly autoComplete?: string
  readonly hint?: ComponentChildren
  readonly error?: string | undefined
}

/** A labelled input: the visible label names it for screen readers and tests. */
export const Field = (props: FieldProps) => {
  const id = useId()
  const hintId = `${id}-hint`
  const errorId = `${id}-error`
  const describedBy = [props.hint === undefined ? "" : hintId, props.error === undefined ? "" : errorId].filter((x) => x !== "").join(" ")
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        type={props.type ?? "text"}
        value={props.value}
        required={props.required}
        minLength={props.minLength}
        autoComplete={props.autoComplete}
        inputMode={props.inputMode}
        aria-invalid={props.error === undefined ? undefined : true}
        aria-describedby={describedBy === "" ? undefined : describedBy}
        onInput={(event) => props.onInput(event.currentTarget.value)}
      />
      {props.hint === undefined ? null : <p class="hint" id={hintId}>{props.hint}</p>}
      {props.error === undefined ? null : <p class="field-error" id={errorId}>{props.error}</p>}
    </div>
  )
}

interface SelectProps<V extends string> {
  readonly label: string
  readonly value: V
  readonly options: ReadonlyArray<{ readonly value: V; readonly label: string }>
  readonly onChange: (value: V) => void
}

export const Select = <V extends string>(props: SelectProps<V>) => {
  const id = useId()
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} onChange={(event) => props.onChange(event.currentTarget.value as V)}>
        {props.options.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
      </select>
    </div>
  )
}

interface CheckboxProps {
  readonly label: string
  readonly checked: boolean
  readonly onChange: (checked: boolean) => void
  readonly hint?: string
}

export const Checkbox = (props: CheckboxProps) => {
  const id = useId()
  return (
    <div class="field checkbox">
      <input id={id} type="checkbox" checked={props.checked} onChange={(event) => props.onChange(event.currentTarget.checked)} />
      <label for={id}>{props.label}</label>
      {props.hint === undefined ? null : <p class="hint">{props.hint}</p>}
    </div>
  )
}
