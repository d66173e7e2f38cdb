// The API and app-serving Hono apps are built on the TrieRouter directly, behind a bounded
// memory of recent matches (src/http/router.ts): the first request pays no failed
// RegExpRouter build, a path seen again is not walked again, and literal segments beside
// parameters still win where the route order says so.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/http/app";
import { buildServeApp } from "../../src/http/serve/app";
import { MAX_REMEMBERED_MATCHES, RememberingRouter } from "../../src/http/router";

describe("routing", () => {
  it("builds both apps on the remembering TrieRouter, so the first match builds nothing else", () => {
    for (const app of [buildApp(), buildServeApp()]) expect(app.router).toBeInstanceOf(RememberingRouter);
  });

  it("hands out a remembered match for a path seen again, and keeps a bounded number of them", () => {
    const router = buildApp().router;
    const create = "/v1/apps/app_01remember/collections/todos";
    const first = router.match("POST", create);
    expect(first[0].length).toBeGreaterThan(0);
    expect(router.match("POST", create)).toBe(first);
    expect(router.match("GET", create)).not.toBe(first);
    const other = router.match("POST", "/v1/apps/app_02remember/collections/todos");
    expect(other).not.toBe(first);
    expect(other[0].map(([[handler]]) => handler)).toEqual(first[0].map(([[handler]]) => handler));
    for (let i = 0; i < MAX_REMEMBERED_MATCHES; i++) router.match("GET", `/v1/apps/app_${i}/collections/todos/k`);
    expect(router.match("POST", create)).not.toBe(first);
    expect(router.match("POST", create)[0].length).toBe(first[0].length);
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
