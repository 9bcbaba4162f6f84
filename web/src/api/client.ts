/** A failed console API call, carrying the server's `{ error: { code, message, field? } }`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly retryAfterSeconds?: number
  ) {
    super(message)
  }
}

interface ErrorBody {
  readonly error?: { readonly code?: string; readonly message?: string; readonly field?: string }
}

/** /console/api/ resolved against the <base> the service writes into the page, so any BASE_PATH works. */
const apiUrl = (path: string): string => new URL(`api/${path.replace(/^\//, "")}`, document.baseURI).toString()

/** Called when any call answers 401: the session ended (expired, signed out elsewhere, member removed). */
let onUnauthorized: () => void = () => {}
export const whenUnauthorized = (handler: () => void): void => {
  onUnauthorized = handler
}

const errorOf = async (response: Response): Promise<ApiError> => {
  const retryAfter = Number(response.headers.get("retry-after") ?? "")
  let body: ErrorBody = {}
  try {
    body = (await response.json()) as ErrorBody
  } catch {
    // Not JSON (a proxy's page): the status alone tells.
  }
  return new ApiError(
    response.status,
    body.error?.code ?? `http_${response.status}`,
    body.error?.message ?? `The server answered ${response.status} ${response.statusText}.`,
    body.error?.field,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined
  )
}

/**
 * One JSON call to the console API with the session cookie. Fails with ApiError on any non-2xx;
 * a 401 also tells the app (except for the sign-in calls, whose 401 is a wrong password).
 */
export const request = async <A>(
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
  path: string,
  body?: unknown,
  options: { readonly quietUnauthorized?: boolean } = {}
): Promise<A> => {
  let response: Response
  try {
    response = await fetch(apiUrl(path), {
      method,
      credentials: "same-origin",
      headers: body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  } catch {
    throw new ApiError(0, "network", "The service could not be reached. Check your connection and try again.")
  }
  if (!response.ok) {
    const error = await errorOf(response)
    if (error.status === 401 && options.quietUnauthorized !== true) onUnauthorized()
    throw error
  }
  if (response.status === 204) return undefined as A
  const text = await response.text()
  return (text === "" ? undefined : JSON.parse(text)) as A
}

/** Query string from defined values only. */
export const query = (params: Readonly<Record<string, string | number | undefined>>): string => {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== "") search.set(key, String(value))
  const text = search.toString()
  return text === "" ? "" : `?${text}`
}
