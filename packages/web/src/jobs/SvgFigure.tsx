/**
 * A visual sub-agent's SVG as an image: an `<img>` of a `blob:` URL runs no script and reaches
 * nothing, whatever the markup holds (the server refuses scripts and external references anyway).
 * With a download link of the same URL.
 */
import { useEffect, useState } from "react"

export interface SvgFigureProps {
  readonly svg: string
  readonly alt: string
  /** The downloaded file's name. */
  readonly fileName: string
}

export function SvgFigure({ alt, fileName, svg }: SvgFigureProps) {
  const [url, setUrl] = useState<string | undefined>(undefined)
  useEffect(() => {
    const made = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }))
    setUrl(made)
    return () => URL.revokeObjectURL(made)
  }, [svg])
  if (url === undefined) return null
  return (
    <figure className="svg-figure">
      <img src={url} alt={alt} />
      <figcaption>
        <a className="button-link" href={url} download={fileName}>Download SVG</a>
      </figcaption>
    </figure>
  )
}
