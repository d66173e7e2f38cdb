/**
 * The guides on the API origin and the index that lists every documentation page:
 * `/docs` (the index), `/docs/<guide>` (HTML for a browser, markdown for a client that asks
 * for it; see docs-page.ts) and `/docs/<guide>.md` (always the markdown). The error hints
 * and the skill document point here, so everything an agent needs is one request away
 * from the relay's own URL.
 */
import type { Hono } from "hono";
import { GUIDES } from "../docs/guides";
import { answerDoc, answerMarkdown } from "./docs-page";
import { notePageRoute } from "./routes";
import type { AppEnv } from "./types";

function docsIndex(): string {
  const guides = GUIDES.map((g) => `- [${g.title}](/docs/${g.slug}): ${g.summary}.`);
  return [
    "# The relay's documentation",
    "",
    "Every page here answers HTML, or its markdown to a client that asks for it with",
    "`Accept: text/markdown` (`text/plain` works too). Each guide's markdown is also at its",
    "address with `.md` added, whatever the client accepts.",
    "",
    "- [The skill document](/skills/service/SKILL.md): the guide for agents: get an identity, deploy an app, use its data, share it.",
    "- [The skill's reference sections](/skills/service/references): one markdown page per topic the skill document only touches on (webhooks, ingest, attachments, assets, agent tasks, notify targets, registering, community templates, …), listed with their addresses.",
    ...guides,
    "- [Error codes](/docs/errors): every code the relay answers with, its status and what to do next.",
    "- [The API description](/v1/openapi.json): every `/v1` route as OpenAPI 3.1.",
    "",
  ].join("\n");
}

export function guideRoutes(app: Hono<AppEnv>): void {
  notePageRoute("get", "/docs");
  app.get("/docs", (c) => answerDoc(c, docsIndex()));
  for (const guide of GUIDES) {
    const path = `/docs/${guide.slug}`;
    notePageRoute("get", path);
    notePageRoute("get", `${path}.md`);
    app.get(path, async (c) => answerDoc(c, await guide.markdown()));
    app.get(`${path}.md`, async (c) => answerMarkdown(c, await guide.markdown()));
  }
}
