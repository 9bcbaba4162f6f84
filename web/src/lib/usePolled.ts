import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import type { ApiError } from "../api/client"
import { asApiError } from "./useLoad"

export interface Polled<A> {
  /** The last answer; undefined until the first one came. */
  readonly value: A | undefined
  /** Why the last load failed; null once one succeeds again. */
  readonly error: ApiError | null
  readonly refreshing: boolean
  /** When `value` was loaded (ISO 8601). */
  readonly loadedAt: string | null
  readonly refresh: () => void
}

/**
 * Loads data now, every `everyMs` while the page is visible, and on `refresh`. Unlike useLoad the last
 * answer stays on screen while the next one loads (a table that blinks every few seconds cannot be read),
 * and a load never overlaps another.
 */
export const usePolled = <A>(load: () => Promise<A>, everyMs: number): Polled<A> => {
  const [value, setValue] = useState<A | undefined>(undefined)
  const [error, setError] = useState<ApiError | null>(null)
  const [refreshing, setRefreshing] = useState(false)
  const [loadedAt, setLoadedAt] = useState<string | null>(null)
  const inFlight = useRef(false)
  const mounted = useRef(true)
  const refresh = useCallback(() => {
    if (inFlight.current) return
    inFlight.current = true
    setRefreshing(true)
    load().then(
      (answer) => {
        if (!mounted.current) return
        setValue(answer)
        setError(null)
        setLoadedAt(new Date().toISOString())
      },
      (failure: unknown) => mounted.current && setError(asApiError(failure))
    ).finally(() => {
      inFlight.current = false
      if (mounted.current) setRefreshing(false)
    })
  }, [])
  useEffect(() => {
    mounted.current = true
    refresh()
    const timer = window.setInterval(() => {
      if (!document.hidden) refresh()
    }, everyMs)
    return () => {
      mounted.current = false
      window.clearInterval(timer)
    }
  }, [everyMs])
  return { value, error, refreshing, loadedAt, refresh }
}
