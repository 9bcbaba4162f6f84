import { useState } from "preact/hooks"

/** Copies a secret to the clipboard and says so; the text stays selectable when the clipboard is refused. */
export const CopyButton = ({ text, label = "Copy" }: { readonly text: string; readonly label?: string }) => {
  const [copied, setCopied] = useState<"idle" | "copied" | "refused">("idle")
  const copy = (): void => {
    navigator.clipboard.writeText(text).then(() => setCopied("copied"), () => setCopied("refused"))
  }
  return (
    <span class="copy">
      <button type="button" onClick={copy}>{label}</button>
      <span role="status" class="hint">
        {copied === "copied" ? "Copied to the clipboard." : copied === "refused" ? "The browser refused: select the text and copy it." : ""}
      </span>
    </span>
  )
}
