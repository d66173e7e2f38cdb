/**
 * The skill document on the API origin: raw markdown and its version, no credential,
 * exempt from the CLI version gate (it is how an old CLI learns what changed).
 */
import type { Hono } from "hono";
import { SKILL_MD, SKILL_VERSION } from "../skill/skill-doc";
import type { AppEnv } from "./types";
import { notePageRoute } from "./routes";

export function skillRoutes(app: Hono<AppEnv>): void {
  notePageRoute("get", "/skills/service/SKILL.md");
  notePageRoute("get", "/skills/service/SKILL.md/version");
  app.get("/skills/service/SKILL.md", (c) => c.body(SKILL_MD, 200, { "content-type": "text/markdown; charset=utf-8", "cache-control": "no-cache" }));
  app.get("/skills/service/SKILL.md/version", (c) => c.json({ version: SKILL_VERSION }));
}
