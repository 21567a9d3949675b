/**
 * A defined kind's result — whatever JSON its sub-agent submitted, as its kind's schema says —
 * drawn for reading: text as Markdown (the research brief's renderer: React elements, never HTML),
 * an object as the list of its fields, each key bold with its value beside it (or below it, when
 * the value is a list, an object or text of several lines), an array as a bulleted list. The same
 * reading as the domain's `readableResult` (what the CLI prints and the chat model is told), drawn
 * instead of indented.
 */
import { BriefText, InlineText } from "./BriefText.tsx"
import { isBlockText } from "./JobText.ts"

/** Nesting drawn as lists down to here; anything deeper as its JSON (a result is not a maze). */
const MAX_DEPTH = 6

const isObject = (value: unknown): value is object => typeof value === "object" && value !== null


const isEmpty = (value: object) => (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0)

/** Shown on the line of its key or bullet: a number, a boolean, null, a line of text, nothing. */
const isInline = (value: unknown) =>
  typeof value === "string" ? !isBlockText(value) : !isObject(value) || isEmpty(value)

function InlineValue({ value }: { readonly value: unknown }) {
  if (typeof value === "string") return value === "" ? <span className="muted">(empty)</span> : <InlineText text={value} />
  if (isObject(value)) return <span className="muted">{Array.isArray(value) ? "(none)" : "(empty)"}</span>
  return <span className="result-tree__scalar">{JSON.stringify(value) ?? String(value)}</span>
}

function BlockValue({ depth, value }: { readonly value: unknown; readonly depth: number }) {
  // Under a key, a text is set in by a rule, as a nested object is: its headings are not the tree's keys.
  if (typeof value === "string") return depth === 0 ? <BriefText text={value} /> : <div className="result-tree__text"><BriefText text={value} /></div>
  if (!isObject(value) || isEmpty(value)) return <p><InlineValue value={value} /></p>
  if (depth >= MAX_DEPTH) return <pre tabIndex={0}><code>{JSON.stringify(value, null, 2)}</code></pre>
  if (Array.isArray(value)) {
    return (
      <ul className="result-tree__items">
        {value.map((item, i) => (
          <li key={i}>{isInline(item) ? <InlineValue value={item} /> : <BlockValue value={item} depth={depth + 1} />}</li>
        ))}
      </ul>
    )
  }
  return (
    <ul className="result-tree__fields">
      {Object.entries(value).map(([key, item]) => (
        <li key={key}>
          <strong className="result-tree__key">{key === "" ? "\"\"" : key}:</strong>
          {isInline(item) ? <> <InlineValue value={item} /></> : <BlockValue value={item} depth={depth + 1} />}
        </li>
      ))}
    </ul>
  )
}

/** Any JSON value as a readable tree (a string alone: its Markdown). */
export function ResultTree({ value }: { readonly value: unknown }) {
  return (
    <div className="result-tree">
      <BlockValue value={value} depth={0} />
    </div>
  )
}
