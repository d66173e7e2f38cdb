/**
 * The skill document on the API origin: raw markdown and its version, no credential,
 * exempt from the CLI version gate (it is how an old CLI learns what changed); and its
 * MCP flavour for MCP clients.
 */
import type { Hono } from "hono";
import { SKILL_MD, SKILL_VERSION } from "../skill/skill-doc";
import { MCP_GUIDE_MD, MCP_GUIDE_VERSION } from "../skill/mcp-guide";
import type { AppEnv } from "./types";
import { notePageRoute } from "./routes";

export function skillRoutes(app: Hono<AppEnv>): void {
  notePageRoute("get", "/skills/service/SKILL.md");
  notePageRoute("get", "/skills/service/SKILL.md/version");
  app.get("/skills/service/SKILL.md", (c) => c.body(SKILL_MD, 200, { "content-type": "text/markdown; charset=utf-8", "cache-control": "no-cache" }));
  app.get("/skills/service/SKILL.md/version", (c) => c.json({ version: SKILL_VERSION }));
  // The MCP flavour (WIRE §2.11): tool calls in place of CLI commands, then the same guide.
  notePageRoute("get", "/skills/service/MCP.md");
  notePageRoute("get", "/skills/service/MCP.md/version");
  app.get("/skills/service/MCP.md", (c) => c.body(MCP_GUIDE_MD, 200, { "content-type": "text/markdown; charset=utf-8", "cache-control": "no-cache" }));
  app.get("/skills/service/MCP.md/version", (c) => c.json({ version: MCP_GUIDE_VERSION }));
}
