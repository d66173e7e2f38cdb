/**
 * Reference pages on the API origin: `/docs/errors` lists every catalogue code with an
 * anchor (each error's `docs_url` points here) and its hint, whose paths link to the pages
 * they name; `/v1/openapi.json` serves the generated API description; the guides and the
 * docs index are in guides.ts.
 */
import type { Hono } from "hono";
import { catalogue } from "../errors";
import { config } from "../config";
import { escapeHtml } from "../docs/markdown-html";
import { openApiDocument } from "./openapi";
import { answerDoc } from "./docs-page";
import { guideRoutes } from "./guides";
import type { AppEnv } from "./types";
import { defineRoute, notePageRoute } from "./routes";

const ENVELOPE = '`{ "error": { "code", "message", "hint", "retryable", "docs_url", "details"? } }`';

/** A path on this origin inside a hint ("see /docs/manifest#limits."), without the sentence's own punctuation. */
const ORIGIN_PATH = /(^|[\s(])(\/[\w./-]*[\w/](?:#[\w-]+)?)/g;

/** Escapes a hint and links each path on this origin it names. */
function linkedHint(hint: string): string {
  return escapeHtml(hint).replace(ORIGIN_PATH, (_m, before: string, path: string) => `${before}<a href="${path}">${path}</a>`);
}

/** The page's HTML body: one row per code, its id the code, so `docs_url` anchors land on it. */
function errorsTable(): string {
  const rows = Object.entries(catalogue).map(([code, e]) =>
    `<tr id="${code}"><td><a href="#${code}"><code>${code}</code></a></td><td>${e.status}</td><td>${e.retryable ? "yes" : "no"}</td><td>${escapeHtml(e.meaning)}</td><td>${linkedHint(e.hint)}</td></tr>`).join("\n");
  return `<h1>Error codes</h1><p>Every error body is <code>${escapeHtml(ENVELOPE.slice(1, -1))}</code>. Only codes marked retryable help when sent again unchanged. A manifest's own errors name the offending spot in <code>details.path</code>; the <a href="/docs/manifest">manifest guide</a> explains each rule.</p>
<table><thead><tr><th>code</th><th>status</th><th>retryable</th><th>meaning</th><th>what to do</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

function errorsMarkdown(): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|");
  const rows = Object.entries(catalogue).map(([code, e]) => `| \`${code}\` | ${e.status} | ${e.retryable ? "yes" : "no"} | ${cell(e.meaning)} | ${cell(e.hint)} |`);
  return [
    "# Error codes",
    "",
    `Every error body is ${ENVELOPE}. Only codes marked retryable help when sent again unchanged.`,
    "A manifest's own errors name the offending spot in `details.path`; the manifest guide (/docs/manifest) explains each rule.",
    "",
    "| code | status | retryable | meaning | what to do |",
    "|---|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}

export function docsRoutes(app: Hono<AppEnv>): void {
  notePageRoute("get", "/docs/errors");
  app.get("/docs/errors", (c) => answerDoc(c, errorsMarkdown(), { title: "Error codes", body: errorsTable() }));
  guideRoutes(app);
  defineRoute(app, {
    method: "get", path: "/v1/openapi.json", tag: "meta", auth: "none",
    summary: "This document: the OpenAPI 3.1 description of the API",
    responses: { 200: { description: "OpenAPI 3.1 document" } },
  }, (c) => c.json(openApiDocument(config(c.env).apiOrigin)));
}
