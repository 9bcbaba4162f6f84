import type { ComponentChildren } from "preact"
import { useEffect, useId, useRef } from "preact/hooks"

interface ConfirmDialogProps {
  readonly title: string
  readonly confirmLabel: string
  readonly children: ComponentChildren
  readonly onConfirm: () => void
  readonly onCancel: () => void
  readonly busy?: boolean
}

/** A modal question (the browser's <dialog>: focus stays inside, Escape cancels). */
export const ConfirmDialog = ({ title, confirmLabel, children, onConfirm, onCancel, busy }: ConfirmDialogProps) => {
  const dialog = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  useEffect(() => {
    dialog.current?.showModal()
  }, [])
  return (
    <dialog ref={dialog} class="confirm" aria-labelledby={titleId} onCancel={(event) => {
      event.preventDefault()
      onCancel()
    }}>
      <h2 id={titleId}>{title}</h2>
      <div>{children}</div>
      <div class="actions">
        <button type="button" class="danger" disabled={busy} onClick={onConfirm}>{confirmLabel}</button>
        <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
      </div>
    </dialog>
  )
}
