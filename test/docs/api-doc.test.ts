// docs/api.md is generated from the route registry; this fails when a route changed and
// nobody ran `npm run docs:api`, so the reference never silently drifts.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderApiDoc } from "../../scripts/api-doc-render";

describe("docs/api.md", () => {
  it("matches the routes the relay registers (run `npm run docs:api` to refresh)", () => {
    const committed = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
    expect(committed).toBe(renderApiDoc());
  });

  it("documents the identity endpoints", () => {
    const doc = renderApiDoc();
    for (const route of ["POST /v1/register", "POST /v1/device/code", "POST /v1/device/token", "POST /v1/agents/claim", "GET /v1/keys", "DELETE /v1/keys/{id}", "POST /v1/self/claim-codes"]) {
      expect(doc).toContain(`### \`${route}\``);
    }
  });
});
