/**
 * The script of the sub-agents' browser test (Jobs.test.ts): the scripted provider plays the chat
 * and every sub-agent from it — the research sub-agent's steps (slow enough to watch, and to reload
 * in the middle), the demo builder's page (which probes what the sandbox denies), the figure's SVG,
 * and two kinds of the test's own (`digest`, which submits a result, and `flaky`, which never does).
 */

/** Each research step of the sub-agent takes this long: time to watch it, and to reload meanwhile. */
const STEP_MS = 3_000

/**
 * The demo's page: each probe of what the sandbox must deny is tried, its outcome written into the
 * page (`#probe-<name>`, `data-outcome` "blocked" or "allowed"). The top window is only navigated
 * from inside a frame: the builder's own headless test loads the page as the top document.
 */
const DEMO_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sandbox probe</title>
<style>body{font-family:sans-serif;margin:1rem;color:#123}li[data-outcome=blocked]{color:#063}</style></head>
<body><h1>Sandbox probe</h1><ul id="out"></ul>
<script>
var out = document.getElementById("out");
function probe(name, run) {
  var li = document.createElement("li");
  li.id = "probe-" + name;
  try { var value = run(); li.dataset.outcome = "allowed"; li.textContent = name + ": allowed " + String(value).slice(0, 60); }
  catch (e) { li.dataset.outcome = "blocked"; li.textContent = name + ": blocked (" + e.name + ")"; }
  out.appendChild(li);
}
probe("parent-document", function () { return parent.document.title; });
probe("local-storage", function () { return localStorage.getItem("chat-store"); });
probe("cookie", function () { return document.cookie; });
if (window.top !== window) probe("top-navigation", function () { top.location.href = "/?escaped=1"; return "asked"; });
document.body.dataset.done = "yes";
</script></body></html>`

/** What the `digest` sub-agent submits (its kind's result schema below). */
const DIGEST = {
  headline: "Sigma.js v3 draws graphs with WebGL",
  summary: "## In short\n\nSigma.js v3 renders **every node type** with its own WebGL program.\n\n- Written in `TypeScript`\n- Faster on large graphs",
  points: ["One program per node type", "Edges drawn in one pass"],
  sources: [{ title: "Sigma.js v3: what changed", url: "https://example.com/sigma-v3" }],
  confidence: 0.8
}

export const DIGEST_KIND = {
  description: "Digest a topic into a headline, a summary and its key points.",
  input: [{ key: "topic", type: "string", required: true, description: "What to digest" }],
  systemPrompt: "You digest {{input.topic}} for a busy reader.",
  result: {
    type: "object",
    required: ["headline", "summary", "points"],
    properties: {
      headline: { type: "string" },
      summary: { type: "string" },
      points: { type: "array", items: { type: "string" } },
      sources: { type: "array", items: { type: "object", properties: { title: { type: "string" }, url: { type: "string" } } } },
      confidence: { type: "number" }
    }
  },
  maxSteps: 3
}

/** A kind whose sub-agent never submits: its job ends in `{ error }`. */
export const FLAKY_KIND = {
  description: "Looks into a subject, and gives up.",
  input: [{ key: "subject", type: "string", required: true }],
  systemPrompt: "Look into {{input.subject}}.",
  result: { type: "object", required: ["answer"], properties: { answer: { type: "string" } } },
  maxSteps: 2
}

const SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100" width="400" height="200">` +
  `<rect x="10" y="10" width="180" height="60" rx="8" fill="#3366cc"/>` +
  `<text x="20" y="92" font-family="sans-serif" font-size="14" fill="#222222">Queue</text></svg>`

/** One script for the chat and every sub-agent; rules are tried in order, on the last message. */
export const script = (web: string) => ({
  description: "packages/web/test/Jobs.test.ts: the chat dispatches research, or a demo and a figure; the sub-agents do their part.",
  rules: [
    // Kinds of the operator's own: the wake turns, their sub-agents (`submit_result`, or giving up), the dispatch.
    { when: { lastRole: "user", contains: "digest sub-agent finished" }, reply: { content: "The digest is in: the headline says it all." } },
    { when: { lastRole: "user", contains: "flaky sub-agent failed" }, reply: { content: "The flaky helper gave up; the digest is enough." } },
    { when: { lastRole: "user", contains: "WebGL graph rendering" }, reply: { content: "", toolCalls: [{ name: "submit_result", args: DIGEST }], delayMs: STEP_MS } },
    { when: { lastRole: "user", contains: "nothing in particular" }, reply: { content: "I would rather not submit anything." } },
    { when: { tool: "flaky" }, reply: { content: "A digester and a flaky helper are on it." } },
    {
      when: { lastRole: "user", contains: "please digest" },
      reply: {
        content: "",
        toolCalls: [
          { name: "digest", args: { topic: "WebGL graph rendering" } },
          { name: "flaky", args: { subject: "nothing in particular" } }
        ]
      }
    },
    // The chat's wake turns, answering each steer.
    { when: { lastRole: "user", contains: "Research complete" }, reply: { content: "The researcher is back: sigma.js v3 draws with WebGL." } },
    { when: { lastRole: "user", contains: "is built" }, reply: { content: "The demo is in: try it above." } },
    { when: { lastRole: "user", contains: "figure is drawn" }, reply: { content: "The figure is in: the bar is the queue." } },
    // The research sub-agent: search, read the page, answer with the brief.
    { when: { lastRole: "user", contains: "Question:" }, reply: { content: "", toolCalls: [{ name: "web_search", args: { query: "sigma.js v3" } }] } },
    {
      when: { tool: "web_search" },
      reply: { content: "", toolCalls: [{ name: "fetch_url", args: { url: `${web}/pages/sigma-v3` } }], delayMs: STEP_MS }
    },
    {
      when: { tool: "fetch_url" },
      reply: {
        content: "## Sigma.js v3\n\n- Renders with **WebGL** programs per node type.\n- Written in `TypeScript`.\n\nSee [the release notes](" +
          `${web}/pages/sigma-v3` + ").",
        delayMs: STEP_MS
      }
    },
    // The demo builder (its task names the demo's title; before the figure's rule: it has a Brief: too).
    { when: { lastRole: "user", contains: "Demo title:" }, reply: { content: "", toolCalls: [{ name: "write_demo", args: { html: DEMO_HTML, notes: "Probes what the sandbox denies." } }] } },
    { when: { tool: "write_demo" }, reply: { content: "Probes what the sandbox denies." } },
    // The visual maker.
    { when: { lastRole: "user", contains: "Brief:" }, reply: { content: "", toolCalls: [{ name: "write_svg", args: { svg: SVG, notes: "A blue bar labelled Queue." } }] } },
    { when: { tool: "write_svg" }, reply: { content: "A blue bar labelled Queue." } },
    // The chat's turns: dispatch, then say so.
    { when: { tool: "research" }, reply: { content: "I have sent a researcher off; its brief will arrive here." } },
    { when: { tool: "visual" }, reply: { content: "A builder and a figure maker are on it." } },
    {
      when: { lastRole: "user", contains: "please research" },
      reply: { content: "", toolCalls: [{ name: "research", args: { question: "What is new in sigma.js v3?" } }] }
    },
    {
      when: { lastRole: "user", contains: "demo and a figure" },
      reply: {
        content: "",
        toolCalls: [
          { name: "demo", args: { title: "Sandbox probe", brief: "A page that lists what it may reach." } },
          { name: "visual", args: { brief: "A queue drawn as a bar with a label." } }
        ]
      }
    }
  ],
  fallback: { content: "(no rule)" }
})
