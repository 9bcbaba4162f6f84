import { useEffect, useState } from "preact/hooks"

/** The app's path below the console's root (the page's <base>): "login", "w/abc/keys", "". */
export const currentRoute = (): string => {
  const base = new URL(document.baseURI).pathname
  const path = window.location.pathname
  return (path.startsWith(base) ? path.slice(base.length) : path).replace(/\/+$/, "")
}

const listeners = new Set<() => void>()

/** Goes to a route of the console without reloading the page. */
export const navigate = (route: string, options: { readonly replace?: boolean } = {}): void => {
  const url = new URL(route, document.baseURI).toString()
  if (options.replace === true) window.history.replaceState(null, "", url)
  else window.history.pushState(null, "", url)
  for (const listener of listeners) listener()
}

/** The current route, re-rendering on navigation and on the browser's back and forward buttons. */
export const useRoute = (): string => {
  const [route, setRoute] = useState(currentRoute)
  useEffect(() => {
    const update = (): void => setRoute(currentRoute())
    listeners.add(update)
    window.addEventListener("popstate", update)
    return () => {
      listeners.delete(update)
      window.removeEventListener("popstate", update)
    }
  }, [])
  return route
}

/** An href for a route, resolved against the <base>, for real links (open in a new tab works). */
export const hrefOf = (route: string): string => new URL(route, document.baseURI).pathname
