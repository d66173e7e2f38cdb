/**
 * How a documentation page on the API origin is answered: HTML by default (a browser, or
 * a client that says nothing), the markdown itself for a client that asks for it, from one
 * source text. `Accept: text/markdown` gets `text/markdown`, `Accept: text/plain` the same
 * text as `text/plain`; a type named outright beats one reached through a wildcard, and
 * at equal rank HTML wins. Every HTML page shares one frame with links to the others.
 */
import { GUIDES } from "../docs/guides";
import { escapeHtml, markdownToHtml } from "../docs/markdown-html";
import type { AppContext } from "./types";

export type DocType = "text/markdown" | "text/html" | "text/plain";

/** In order of preference when a client ranks them equally. */
const OFFERED: readonly DocType[] = ["text/html", "text/markdown", "text/plain"];

interface Ranked {
  q: number;
  /** Named outright, not matched through a wildcard range. */
  named: boolean;
}

function rank(accept: string, type: DocType): Ranked {
  let best: Ranked & { specificity: number } = { q: 0, named: false, specificity: -1 };
  for (const part of accept.split(",")) {
    const [range, ...params] = part.trim().toLowerCase().split(";");
    const specificity = range === type ? 2 : range === "text/*" ? 1 : range === "*/*" ? 0 : -1;
    if (specificity <= best.specificity) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    best = { q: Number.isFinite(q) ? q : 0, named: specificity === 2, specificity };
  }
  return best;
}

/** The type to answer a documentation request with, from its Accept header. */
export function preferredDocType(accept: string | undefined): DocType {
  if (!accept) return "text/html";
  let chosen: DocType = "text/html";
  let top: Ranked = { q: 0, named: false };
  for (const type of OFFERED) {
    const r = rank(accept, type);
    if (r.q > top.q || (r.q === top.q && r.named && !top.named)) {
      chosen = type;
      top = r;
    }
  }
  return chosen;
}

const NAV: Array<[string, string]> = [
  ["/docs", "Docs"],
  ["/docs/errors", "Error codes"],
  ...GUIDES.map((g): [string, string] => [`/docs/${g.slug}`, g.title]),
  ["/skills/service/SKILL.md", "Skill document"],
  ["/v1/openapi.json", "OpenAPI"],
];

const STYLE = "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;line-height:1.5}"
  + "nav a{margin-right:1rem}table{border-collapse:collapse;margin:1rem 0}td,th{border-bottom:1px solid #ddd;padding:.4rem .6rem;text-align:left;vertical-align:top}"
  + "tr:target{background:#fff7d6}pre{background:#f6f8fa;padding:.8rem;overflow:auto}code{font-size:.92em}h1 a.anchor,h2 a.anchor,h3 a.anchor,h4 a.anchor{color:inherit;text-decoration:none}";

/** A complete HTML page in the docs' frame. `body` is HTML already. */
export function docsPage(title: string, body: string): string {
  const nav = NAV.map(([href, label]) => `<a href="${href}">${escapeHtml(label)}</a>`).join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} — the relay</title><style>${STYLE}</style></head>
<body><nav>${nav}</nav>
${body}
</body></html>`;
}

/**
 * Answers a documentation page in the type the client prefers. `html` is the page's own
 * HTML body when it has one; otherwise the markdown is rendered.
 */
export function answerDoc(c: AppContext, markdown: string, html?: { title: string; body: string }): Response {
  const type = preferredDocType(c.req.header("accept"));
  const headers = { vary: "Accept", "cache-control": "no-cache" };
  if (type !== "text/html") return c.body(markdown, 200, { ...headers, "content-type": `${type}; charset=utf-8` });
  const page = html ?? (() => {
    const rendered = markdownToHtml(markdown);
    return { title: rendered.title, body: rendered.html };
  })();
  return c.html(docsPage(page.title, page.body), 200, headers);
}

/** The markdown of a page as it is, for a `.md` address. */
export function answerMarkdown(c: AppContext, markdown: string): Response {
  return c.body(markdown, 200, { "content-type": "text/markdown; charset=utf-8", "cache-control": "no-cache" });
}
