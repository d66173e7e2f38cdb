// The API and app-serving Hono apps are built on the TrieRouter directly (src/http/router.ts):
// the first request pays no failed RegExpRouter build, and literal segments beside
// parameters still win where the route order says so.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/http/app";
import { buildServeApp } from "../../src/http/serve/app";

describe("routing", () => {
  it("builds both apps on the TrieRouter, so the first match builds nothing else", () => {
    for (const app of [buildApp(), buildServeApp()]) {
      expect((app.router as { name: string }).name).toBe("TrieRouter");
    }
  });

  it("keeps literal segments beside parameters apart", async () => {
    // /v1/apps/advisories is registered before /v1/apps/:id; without a key both refuse the
    // caller, but as themselves: the literal route is not taken for an app id.
    const advisories = await SELF.fetch("http://localhost:8787/v1/apps/advisories");
    const app = await SELF.fetch("http://localhost:8787/v1/apps/app_nonexistent");
    expect(advisories.status).toBe(401);
    expect(app.status).toBe(401);
    const stream = await SELF.fetch("http://localhost:8787/v1/agent-tasks/stream", { method: "DELETE" });
    expect(stream.status).toBe(405);
    expect(stream.headers.get("allow")).toBe("GET, HEAD");
  });
});
