/**
 * A demo sub-agent's page, running in `<iframe sandbox="allow-scripts" src="/sandbox.html">` —
 * never `allow-same-origin`: the frame's origin is opaque, so the demo cannot reach the console's
 * DOM, storage or cookies, nor navigate the top window. Once the frame has loaded, the page is
 * posted to it (`{ type: "switchboard-demo", html }`, target "*" because an opaque origin has no
 * name); sandbox.html then becomes that page, under its own policy (docs/console.md: why not srcdoc).
 */
import { useRef } from "react"

export interface DemoFrameProps {
  readonly title: string
  readonly html: string
}

export function DemoFrame({ html, title }: DemoFrameProps) {
  const frame = useRef<HTMLIFrameElement>(null)
  // Once per frame: a second load event (the demo's own document.close) must not post it again.
  const posted = useRef(false)
  return (
    <iframe
      ref={frame}
      className="demo-frame"
      sandbox="allow-scripts"
      src="/sandbox.html"
      title={`Interactive demo: ${title}`}
      onLoad={() => {
        if (posted.current) return
        posted.current = true
        frame.current?.contentWindow?.postMessage({ type: "switchboard-demo", html }, "*")
      }}
    />
  )
}
