/**
 * The skill document on the API origin: raw markdown and its version, no credential,
 * exempt from the CLI version gate (it is how an old CLI learns what changed); its
 * reference sections (a list, and one markdown page per topic); and its MCP flavour for
 * MCP clients.
 */
import type { Hono } from "hono";
import { SKILL_MD, SKILL_VERSION } from "../skill/skill-doc";
import { mcpGuideMarkdown, MCP_GUIDE_VERSION } from "../skill/mcp-guide";
import { findReference, REFERENCE_PATH, REFERENCE_SECTIONS, referenceEntry, referenceStamp } from "../skill/references";
import { config } from "../config";
import { RelayError } from "../errors";
import type { AppEnv } from "./types";
import { notePageRoute } from "./routes";

const MARKDOWN = { "content-type": "text/markdown; charset=utf-8", "cache-control": "no-cache" };

export function skillRoutes(app: Hono<AppEnv>): void {
  notePageRoute("get", "/skills/service/SKILL.md");
  notePageRoute("get", "/skills/service/SKILL.md/version");
  app.get("/skills/service/SKILL.md", (c) => c.body(SKILL_MD, 200, MARKDOWN));
  app.get("/skills/service/SKILL.md/version", (c) => c.json({ version: SKILL_VERSION }));
  // The MCP flavour (WIRE §2.11): tool calls in place of CLI commands, then the same guide.
  notePageRoute("get", "/skills/service/MCP.md");
  notePageRoute("get", "/skills/service/MCP.md/version");
  app.get("/skills/service/MCP.md", async (c) => c.body(await mcpGuideMarkdown(), 200, MARKDOWN));
  app.get("/skills/service/MCP.md/version", (c) => c.json({ version: MCP_GUIDE_VERSION }));
  // The reference sections (WIRE §2.11): the list, then one page per slug as `<slug>.md`.
  notePageRoute("get", REFERENCE_PATH);
  notePageRoute("get", `${REFERENCE_PATH}/:file`);
  app.get(REFERENCE_PATH, (c) => c.json({ sections: REFERENCE_SECTIONS.map((section) => referenceEntry(section, config(c.env).apiOrigin)) }));
  app.get(`${REFERENCE_PATH}/:file`, async (c) => {
    const file = c.req.param("file");
    const section = file.endsWith(".md") ? findReference(file.slice(0, -3)) : undefined;
    if (!section) {
      throw new RelayError("skill_reference_not_found", `The skill has no reference section at ${REFERENCE_PATH}/${file.slice(0, 100)}.`, {
        sections: REFERENCE_SECTIONS.map((s) => `${s.slug}.md`),
      });
    }
    return c.body(`${referenceStamp(section.slug)}\n${await section.markdown()}`, 200, MARKDOWN);
  });
}
