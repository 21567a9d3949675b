import { readableText } from "./src/jobs/subagents/research/ReadableText.ts"
const para = "<p>" + "word ".repeat(40) + "</p>"
const html = "<html><head><title>Big</title></head><body><nav>menu</nav><article>" + para.repeat(8000) + "</article></body></html>"
const t = performance.now(); const r = readableText(html); console.log("ms", Math.round(performance.now() - t), r.title, r.text.length)
const deep = "<html><body>" + "<div>".repeat(5000) + "deep text" + "</div>".repeat(5000) + "</body></html>"
const t2 = performance.now(); const r2 = readableText(deep); console.log("deep ms", Math.round(performance.now() - t2), JSON.stringify(r2.text))
