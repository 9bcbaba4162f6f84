import { useCallback, useEffect, useState } from "preact/hooks"
import { ApiError } from "../api/client"

export type Loaded<A> =
  | { readonly state: "loading" }
  | { readonly state: "failed"; readonly error: ApiError }
  | { readonly state: "ready"; readonly value: A }

/** Any failure as an ApiError, so pages show one kind of error. */
export const asApiError = (error: unknown): ApiError =>
  error instanceof ApiError ? error : new ApiError(0, "unexpected", error instanceof Error ? error.message : String(error))

/** Loads data for a page, again whenever `deps` change or `reload` is called. Stale answers are dropped. */
export const useLoad = <A>(load: () => Promise<A>, deps: ReadonlyArray<unknown>): [Loaded<A>, () => void] => {
  const [loaded, setLoaded] = useState<Loaded<A>>({ state: "loading" })
  const [generation, setGeneration] = useState(0)
  useEffect(() => {
    let current = true
    setLoaded({ state: "loading" })
    load().then(
      (value) => current && setLoaded({ state: "ready", value }),
      (error: unknown) => current && setLoaded({ state: "failed", error: asApiError(error) })
    )
    return () => {
      current = false
    }
  }, [...deps, generation])
  const reload = useCallback(() => setGeneration((n) => n + 1), [])
  return [loaded, reload]
}

/** Runs an action from a form: tracks running and its error, so buttons can disable and errors show. */
export const useAction = <Args extends Array<unknown>, A>(
  action: (...args: Args) => Promise<A>
): { readonly run: (...args: Args) => Promise<A | undefined>; readonly running: boolean; readonly error: ApiError | null; readonly clearError: () => void } => {
  const [running, setRunning] = useState(false)
  const [error, setError] = useState<ApiError | null>(null)
  const run = async (...args: Args): Promise<A | undefined> => {
    setRunning(true)
    setError(null)
    try {
      return await action(...args)
    } catch (failure) {
      setError(asApiError(failure))
      return undefined
    } finally {
      setRunning(false)
    }
  }
  return { run, running, error, clearError: () => setError(null) }
}
