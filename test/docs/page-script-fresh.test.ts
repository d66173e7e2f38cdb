// src/page-script/bundle.generated.ts is built from src/page-script/*.ts; this fails when
// someone changed the page script and did not run `npm run build:page-script`, so the
// relay never serves a bundle that differs from its sources.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain ESM build script
import { OUTPUT, renderPageScriptModule } from "../../scripts/build-page-script.mjs";

describe("page script bundle", () => {
  it("matches its sources (run `npm run build:page-script` to refresh)", async () => {
    const committed = readFileSync(OUTPUT, "utf8");
    expect(committed).toBe(await renderPageScriptModule());
  });

  it("names the SDK by the first 16 hex digits of its sha256", async () => {
    const text = await renderPageScriptModule();
    const hash = /export const SDK_HASH = "([0-9a-f]{16})";/.exec(text)?.[1];
    const source = JSON.parse(/export const SDK_SOURCE = (".*");/.exec(text)![1]) as string;
    const { createHash } = await import("node:crypto");
    expect(hash).toBe(createHash("sha256").update(source).digest("hex").slice(0, 16));
  });
});
