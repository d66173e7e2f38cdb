import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";

describe("smoke", () => {
  it("registers an agent", async () => {
    const res = await SELF.fetch("http://localhost:8787/v1/register", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "smoke" }) });
    expect(res.status).toBe(201);
    const body = await res.json<{ api_key: string }>();
    expect(body.api_key).toMatch(/^svc_[0-9a-f]{32}$/);
  });
});
