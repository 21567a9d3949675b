/**
 * Rendering the visual maker's SVG to PNG with resvg (`@resvg/resvg-js`, a
 * native renderer: no browser). The render is the proof that the SVG parses
 * (resvg's XML parser is strict) and draws something, and the picture the
 * maker looks at. It runs on the resvg thread synchronously; the sizes are
 * bounded so one render stays in the tens of milliseconds.
 */
import { Resvg } from "@resvg/resvg-js"

/** Width of the PNG the maker looks at. */
export const RENDER_WIDTH = 800
/** Past this height (at RENDER_WIDTH) the figure is no figure: refused, not rendered. */
export const MAX_RENDER_HEIGHT = 3200

export type SvgRender =
  | { readonly _tag: "Rendered"; readonly png: Buffer; readonly width: number; readonly height: number }
  | { readonly _tag: "Refused"; readonly problem: string }

const refused = (problem: string): SvgRender => ({ _tag: "Refused", problem })

/** Whether any pixel is not fully transparent (RGBA bytes). */
const drawsSomething = (pixels: Uint8Array): boolean => {
  for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) return true
  return false
}

export const renderSvg = (svg: string): SvgRender => {
  let resvg: Resvg
  try {
    resvg = new Resvg(svg, {
      fitTo: { mode: "width", value: RENDER_WIDTH },
      // External files are never read: only what the SVG carries inline is drawn.
      font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" },
      logLevel: "off"
    })
  } catch (error) {
    return refused(`the SVG does not parse: ${(error as Error).message}`)
  }
  const { height, width } = resvg
  if (!(width > 0 && height > 0)) return refused("the SVG has no size: give the root <svg> a viewBox (or width and height)")
  const scaledHeight = Math.ceil(height * RENDER_WIDTH / width)
  if (scaledHeight > MAX_RENDER_HEIGHT) {
    return refused(`the SVG is ${width}×${height}: too tall a figure (more than ${MAX_RENDER_HEIGHT / RENDER_WIDTH}:1)`)
  }
  const image = resvg.render()
  if (!drawsSomething(image.pixels)) return refused("the SVG renders nothing visible (every pixel is transparent)")
  return { _tag: "Rendered", png: image.asPng(), width: image.width, height: image.height }
}
