/**
 * Human-readable reference pages on the API origin: `/docs/errors` lists every catalogue
 * code with an anchor (each error's `docs_url` points here), and `/v1/openapi.json`
 * serves the generated API description.
 */
import type { Hono } from "hono";
import { html, raw } from "hono/html";
import { catalogue } from "../errors";
import { config } from "../config";
import { openApiDocument } from "./openapi";
import type { AppEnv } from "./types";
import { defineRoute, notePageRoute } from "./routes";

function escape(s: string): string {
  return s.replace(/[&<>"]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[ch]!);
}

export function errorsPage(): string {
  const rows = Object.entries(catalogue).map(([code, e]) =>
    `<tr id="${code}"><td><a href="#${code}"><code>${code}</code></a></td><td>${e.status}</td><td>${e.retryable ? "yes" : "no"}</td><td>${escape(e.meaning)}</td><td>${escape(e.hint)}</td></tr>`).join("\n");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Error codes — the relay</title><style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:72rem}table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.4rem .6rem;text-align:left;vertical-align:top}tr:target{background:#fff7d6}</style></head>
<body><h1>Error codes</h1><p>Every error body is <code>{ "error": { "code", "message", "hint", "retryable", "docs_url", "details"? } }</code>. Only codes marked retryable help when sent again unchanged.</p>
<table><thead><tr><th>code</th><th>status</th><th>retryable</th><th>meaning</th><th>what to do</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
}

export function docsRoutes(app: Hono<AppEnv>): void {
  notePageRoute("get", "/docs/errors");
  app.get("/docs/errors", (c) => c.html(html`${raw(errorsPage())}`));
  defineRoute(app, {
    method: "get", path: "/v1/openapi.json", tag: "meta", auth: "none",
    summary: "This document: the OpenAPI 3.1 description of the API",
    responses: { 200: { description: "OpenAPI 3.1 document" } },
  }, (c) => c.json(openApiDocument(config(c.env).apiOrigin)));
}
