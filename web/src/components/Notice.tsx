import type { ComponentChildren } from "preact"
import type { ApiError } from "../api/client"

/** An error the user should read: announced by screen readers as it appears. */
export const ErrorNote = ({ error }: { readonly error: ApiError | null }) =>
  error === null ? null : (
    <p class="error" role="alert">
      {error.message}
      {/* The server's message may already say when; otherwise the retry-after header does. */}
      {error.retryAfterSeconds === undefined || /try again/i.test(error.message) ? null : ` Try again in ${Math.ceil(error.retryAfterSeconds / 60)} min.`}
    </p>
  )

/** What a page says when there is nothing to list yet. */
export const Empty = ({ children }: { readonly children: ComponentChildren }) => <p class="empty">{children}</p>

export const Loading = () => <p class="loading" role="status">Loading…</p>

/** Shown where a page's data could not be loaded, with what the server said. */
export const LoadFailed = ({ error, onRetry }: { readonly error: ApiError; readonly onRetry: () => void }) => (
  <div class="error" role="alert">
    <p>{error.status === 403 ? "Your role does not allow this page." : error.message}</p>
    <button type="button" class="secondary" onClick={onRetry}>Try again</button>
  </div>
)
