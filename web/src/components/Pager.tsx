import type { Loaded } from "../lib/useLoad"

/**
 * Previous / Next for a cursor-paged list. `cursors` are the pages seen so far (the first is undefined),
 * so Previous works without the server paging backwards.
 */
export const Pager = ({ label, cursors, setCursors, page }: {
  readonly label: string
  readonly cursors: ReadonlyArray<string | undefined>
  readonly setCursors: (cursors: ReadonlyArray<string | undefined>) => void
  readonly page: Loaded<{ readonly nextCursor?: string | null | undefined }>
}) => (
  <nav class="pager" aria-label={label}>
    <button type="button" class="secondary" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>Previous page</button>
    <button
      type="button"
      class="secondary"
      disabled={page.state !== "ready" || page.value.nextCursor == null}
      onClick={() => page.state === "ready" && page.value.nextCursor != null && setCursors([...cursors, page.value.nextCursor])}
    >Next page</button>
  </nav>
)
