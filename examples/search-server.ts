/**
 * A tiny SearXNG-compatible search server with a few pages, for trying the
 * research sub-agent without the internet (node:http only, no dependencies).
 *
 *   npx node examples/search-server.ts        # http://127.0.0.1:8888 (PORT=… to change)
 *   SEARCH_URL=http://127.0.0.1:8888 FETCH_ALLOW_PRIVATE=1 npm start
 *
 * `GET /search?q=…&format=json` answers `{ query, results: [{ title, url, content }] }`,
 * the pages whose words best match the query first; `GET /pages/<slug>` serves
 * each page as HTML. `FETCH_ALLOW_PRIVATE=1` is needed because the pages are on
 * 127.0.0.1, which `fetch_url` refuses by default.
 */
import { createServer } from "node:http"

interface Page {
  readonly slug: string
  readonly title: string
  readonly summary: string
  readonly paragraphs: ReadonlyArray<string>
}

const pages: ReadonlyArray<Page> = [
  {
    slug: "sigma-v3",
    title: "Sigma.js v3: what changed",
    summary: "Sigma.js v3 renders graphs with WebGL programs per node and edge type and is written in TypeScript.",
    paragraphs: [
      "Sigma.js is a JavaScript library for drawing large graphs in the browser. Version 3 is a rewrite in TypeScript.",
      "Rendering goes through WebGL programs: each node type and edge type has its own program, and custom programs can be added.",
      "The graph itself lives in a graphology instance: sigma only draws it and handles interaction (hover, click, drag, zoom).",
      "Labels are drawn on a separate 2D canvas layer above the WebGL scene, which keeps text crisp."
    ]
  },
  {
    slug: "graphology",
    title: "Graphology, the graph data model",
    summary: "Graphology is a multipurpose Graph object for JavaScript, with a standard library of graph algorithms.",
    paragraphs: [
      "Graphology provides one Graph class that can be directed, undirected or mixed, simple or multi.",
      "Its standard library covers layouts (ForceAtlas2, circular), metrics, communities (Louvain) and traversals.",
      "Sigma.js reads node attributes x, y, size, color and label from a graphology graph."
    ]
  },
  {
    slug: "webgl-graphs",
    title: "Why WebGL for graph rendering",
    summary: "Canvas 2D slows down past a few thousand nodes; WebGL draws tens of thousands in one pass on the GPU.",
    paragraphs: [
      "Drawing each node with the Canvas 2D API costs one call per shape, which limits interactive graphs to a few thousand nodes.",
      "WebGL uploads node positions to the GPU once and draws them all in a single call per program.",
      "The trade-off: custom shapes must be written as shader programs."
    ]
  }
]

// PORT=0 picks a free port (the tests do); the origin is known once listening.
let origin = ""

const words = (text: string) => text.toLowerCase().split(/[^a-z0-9.]+/).filter((w) => w.length > 1)

const search = (query: string) => {
  const wanted = new Set(words(query))
  return pages
    .map((page) => ({
      page,
      score: words(`${page.title} ${page.summary} ${page.paragraphs.join(" ")}`).filter((w) => wanted.has(w)).length
    }))
    .filter((hit) => hit.score > 0)
    .sort((a, b) => b.score - a.score)
    .map(({ page }) => ({ title: page.title, url: `${origin}/pages/${page.slug}`, content: page.summary }))
}

const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const html = (page: Page) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${escape(page.title)}</title></head><body>` +
  `<nav><a href="/">Home</a> · <a href="/pages/graphology">Graphology</a></nav>` +
  `<article><h1>${escape(page.title)}</h1>${page.paragraphs.map((p) => `<p>${escape(p)}</p>`).join("")}</article>` +
  `<footer>Example pages served by examples/search-server.ts</footer></body></html>`

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost")
  const send = (status: number, type: string, body: string) =>
    res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) }).end(body)

  if (url.pathname === "/search") {
    const query = url.searchParams.get("q") ?? ""
    console.log(`search: ${JSON.stringify(query)}`)
    return send(200, "application/json", JSON.stringify({ query, results: search(query) }))
  }
  const page = pages.find((p) => url.pathname === `/pages/${p.slug}`)
  if (page !== undefined) {
    console.log(`page: ${url.pathname}`)
    return send(200, "text/html; charset=utf-8", html(page))
  }
  return send(404, "text/plain", "not found")
})

server.listen(Number(process.env["PORT"] ?? 8888), "127.0.0.1", () => {
  const address = server.address()
  origin = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
  console.log(`search server on ${origin} (GET /search?q=…&format=json)`)
})
