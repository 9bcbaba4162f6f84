import type { ComponentChildren } from "preact"
import { hrefOf, navigate } from "../lib/router"

/** A real link (works with the keyboard, middle click, new tab) that navigates in place on a plain click. */
export const Link = (props: { readonly to: string; readonly children: ComponentChildren; readonly current?: boolean; readonly class?: string }) => (
  <a
    href={hrefOf(props.to)}
    class={props.class}
    aria-current={props.current === true ? "page" : undefined}
    onClick={(event) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
      event.preventDefault()
      navigate(props.to)
    }}
  >
    {props.children}
  </a>
)
