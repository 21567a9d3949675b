/**
 * A tiny OTLP/HTTP trace collector for trying Switchboard's traces on one
 * machine (docs/observability.md, "Trying it"): no network, `node:http`
 * only. It takes `POST /v1/traces` in OTLP's JSON encoding (start the server
 * with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) and prints one line per
 * GenAI span (`invoke_agent`, `chat {model}`, `execute_tool {name}`): its
 * name, its duration, and its `gen_ai.*` and `switchboard.*` attributes.
 * `--all` prints every span (the HTTP requests, SQL statements, the job
 * loops' claims: many a second).
 *
 * Run: `npx node examples/otlp-collector.ts [port] [--all]` (default 4318), then
 * `OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_EXPORTER_OTLP_PROTOCOL=http/json npm start`.
 */
import { createServer } from "node:http"

const args = process.argv.slice(2)
const all = args.includes("--all")
const port = Number(args.find((arg) => arg !== "--all") ?? process.env["PORT"] ?? 4318)

interface AnyValue {
  readonly stringValue?: string
  readonly intValue?: string | number
  readonly doubleValue?: number
  readonly boolValue?: boolean
}

interface Span {
  readonly name: string
  readonly startTimeUnixNano: string
  readonly endTimeUnixNano: string
  readonly attributes?: ReadonlyArray<{ readonly key: string; readonly value: AnyValue }>
}

interface TracesRequest {
  readonly resourceSpans?: ReadonlyArray<{ readonly scopeSpans?: ReadonlyArray<{ readonly spans?: ReadonlyArray<Span> }> }>
}

const valueOf = (value: AnyValue) => value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue

const isGenAi = (span: Span) => (span.attributes ?? []).some(({ key }) => key === "gen_ai.operation.name")

const lineOf = (span: Span): string => {
  const ms = (Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6).toFixed(1)
  const shown = (span.attributes ?? [])
    .filter(({ key }) => key.startsWith("gen_ai.") || key.startsWith("switchboard."))
    .map(({ key, value }) => `${key}=${JSON.stringify(valueOf(value))}`)
  return `${span.name} (${ms} ms)${shown.length === 0 ? "" : `  ${shown.join(" ")}`}`
}

const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    if (req.method !== "POST" || req.url !== "/v1/traces") return void res.writeHead(404).end()
    if (!(req.headers["content-type"] ?? "").includes("json")) {
      console.log("a request that is not JSON: start the server with OTEL_EXPORTER_OTLP_PROTOCOL=http/json")
      return void res.writeHead(415).end()
    }
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as TracesRequest
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) if (all || isGenAi(span)) console.log(lineOf(span))
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    } catch {
      res.writeHead(400).end()
    }
  })
})

server.listen(port, "127.0.0.1", () => console.log(`OTLP collector on http://127.0.0.1:${port}/v1/traces`))
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.close(() => process.exit(0)))
