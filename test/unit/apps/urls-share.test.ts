// Where an app lives and its share token (src/apps/urls.ts, share.ts; CONTRACT §2).
import { describe, expect, it } from "vitest";
import { config } from "../../../src/config";
import { appUrl, slugFromHost } from "../../../src/apps/urls";
import { mintShareToken, shareTokenMatches } from "../../../src/apps/share";

describe("appUrl", () => {
  it("follows the API origin's scheme", () => {
    expect(appUrl(config({ API_ORIGIN: "http://localhost:8787", APPS_DOMAIN: "localhost:8787" }), "notes")).toBe("http://notes.localhost:8787/");
    expect(appUrl(config({ API_ORIGIN: "https://relay.example.com", APPS_DOMAIN: "apps.example.com" }), "notes")).toBe("https://notes.apps.example.com/");
  });
});

describe("slugFromHost", () => {
  it.each([
    ["notes.localhost:8787", "notes"], ["NOTES.localhost:8787", "notes"], ["localhost:8787", null], ["a.b.localhost:8787", null],
    ["notes.localhost:9999", null], ["-bad.localhost:8787", null], ["evil.com", null],
  ])("%s → %j", (host, slug) => {
    expect(slugFromHost(host, "localhost:8787")).toBe(slug);
  });
});

describe("share tokens", () => {
  it("are 32 hex characters kept only as a sha256; only the exact token matches", async () => {
    const { token, hash } = await mintShareToken();
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(token);
    expect(await shareTokenMatches(token, hash)).toBe(true);
    expect(await shareTokenMatches(token.toUpperCase(), hash)).toBe(false);
    expect(await shareTokenMatches(`${token.slice(0, -1)}0`, hash)).toBe(token.endsWith("0"));
    expect(await shareTokenMatches(token, null)).toBe(false);
    expect(await shareTokenMatches("", hash)).toBe(false);
    const other = await mintShareToken();
    expect(other.token).not.toBe(token);
    expect(await shareTokenMatches(other.token, hash)).toBe(false);
  });
});
