// What an app's pages are told about the bot challenge (WIRE §4.4): the boot config names
// the Turnstile site key, the script URL and the antiAbuse collections, and the CSP lets
// the script's origin into script-src and frame-src, only for an app with an antiAbuse
// collection on a relay that has Turnstile (a site key, or development mode's test key).
// The gate shell of a gated app keeps the CSP but not the collection names.
import { describe, expect, it } from "vitest";
import { TURNSTILE_SCRIPT_DEFAULT, TURNSTILE_TEST_SITE_KEY, config } from "../../../src/config";
import { call, callWith, expectError, json } from "../helpers";
import { appCall, appCallWith, csp, deploy, owner, type Obj } from "./helpers";

const CLOUDFLARE = "https://challenges.cloudflare.com";
const open = { read: ["anyone"], write: ["anyone"], update: ["owner"], delete: ["owner"], anonWriteBudget: { perIpPerDay: 0, perAppPerDay: 0 } };

function manifest(collections: Record<string, Obj>): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    "x-service-manifest": { app: { name: "Guestbook" }, collections },
  };
}

const GUARDED = {
  notes: open,
  guestbook: { ...open, antiAbuse: "turnstile" },
  wall: { ...open, antiAbuse: "challenge" },
};
const PLAIN = { notes: GUARDED.notes };

function bootConfig(text: string): Obj {
  const match = /<script data-svc="([^"]*)">/.exec(text);
  expect(match).not.toBeNull();
  const raw = match![1].replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  return JSON.parse(raw) as Obj;
}

async function app(collections: Record<string, Obj>, visibility = "public") {
  return deploy(await owner(), { html: "<p>guestbook</p>", manifest: manifest(collections), visibility });
}

describe("the bot challenge in served documents", () => {
  it("an antiAbuse app's boot config names the site key, the script and the guarded collections; its CSP admits the script's origin", async () => {
    const { slug } = await app(GUARDED);
    const res = await appCall(slug, "/");
    expect(res.status).toBe(200);
    expect(bootConfig(await res.text()).challenge).toEqual({
      siteKey: TURNSTILE_TEST_SITE_KEY, script: TURNSTILE_SCRIPT_DEFAULT, collections: ["guestbook", "wall"],
    });
    const policy = csp(res);
    expect(policy["script-src"]).toEqual(["'self'", "'unsafe-inline'", CLOUDFLARE]);
    expect(policy["frame-src"]).toEqual([CLOUDFLARE]);
    expect(policy["connect-src"]).toEqual(["'self'"]);
  });

  it("an app without antiAbuse gets neither", async () => {
    const { slug } = await app(PLAIN);
    const res = await appCall(slug, "/");
    expect(bootConfig(await res.text())).not.toHaveProperty("challenge");
    const policy = csp(res);
    expect(policy["script-src"]).toEqual(["'self'", "'unsafe-inline'"]);
    expect(policy["frame-src"]).toEqual(["'none'"]);
    expect(res.headers.get("content-security-policy")).not.toContain(CLOUDFLARE);
  });

  it("keeps the challenge origin beside the manifest's own embeds and cdn", async () => {
    const who = await owner();
    const withExtras = manifest(GUARDED);
    Object.assign((withExtras["x-service-manifest"] as Obj), { embeds: ["https://www.youtube.com"], cdn: true });
    const { slug } = await deploy(who, { html: "<p>x</p>", manifest: withExtras });
    const policy = csp(await appCall(slug, "/"));
    expect(policy["script-src"]).toEqual(["'self'", "'unsafe-inline'", "https:", CLOUDFLARE]);
    expect(policy["frame-src"]).toEqual(["https://www.youtube.com", CLOUDFLARE]);
  });

  it("the gate shell of a private app carries the CSP the document needs, not the collection names", async () => {
    const { slug } = await app(GUARDED, "private");
    const shell = await appCall(slug, "/");
    const text = await shell.text();
    expect(text).toContain('id="svc-gate"');
    expect(text).not.toContain("challenge");
    expect(text).not.toContain("wall");
    expect(text).not.toContain(TURNSTILE_TEST_SITE_KEY);
    expect(csp(shell)["script-src"]).toContain(CLOUDFLARE);
  });

  it("a production relay without a site key tells the page nothing and keeps the CSP closed", async () => {
    const { slug } = await app(GUARDED);
    const res = await appCallWith({ RELAY_ENV: "production", TURNSTILE_SITE_KEY: "" }, slug, "/");
    expect(res.status).toBe(200);
    expect(bootConfig(await res.text())).not.toHaveProperty("challenge");
    expect(res.headers.get("content-security-policy")).not.toContain(CLOUDFLARE);
  });

  it("uses the relay's site key and script URL when set", async () => {
    const { slug } = await app(GUARDED);
    const res = await appCallWith({ RELAY_ENV: "production", TURNSTILE_SITE_KEY: "0x4AAAAAAAexample", TURNSTILE_SECRET_KEY: "0x4AAAAAAAsecret" }, slug, "/");
    expect(bootConfig(await res.text()).challenge).toEqual({ siteKey: "0x4AAAAAAAexample", script: TURNSTILE_SCRIPT_DEFAULT, collections: ["guestbook", "wall"] });
    expect(csp(res)["frame-src"]).toEqual([CLOUDFLARE]);

    const local = await appCallWith({ TURNSTILE_SCRIPT_URL: "http://127.0.0.1:9/turnstile/v0/api.js" }, slug, "/");
    expect(bootConfig(await local.text()).challenge).toMatchObject({ siteKey: TURNSTILE_TEST_SITE_KEY, script: "http://127.0.0.1:9/turnstile/v0/api.js" });
    expect(csp(local)["script-src"]).toEqual(["'self'", "'unsafe-inline'", "http://127.0.0.1:9"]);
    expect(csp(local)["frame-src"]).toEqual(["http://127.0.0.1:9"]);
  });
});

describe("deploying antiAbuse", () => {
  it("is refused (400 manifest_invalid at the collection's antiAbuse) on a relay without Turnstile, and nothing is created", async () => {
    const who = await owner();
    const production = { RELAY_ENV: "production", TURNSTILE_SITE_KEY: "0x4AAAAAAAexample" };
    const res = await callWith(production, "/v1/apps", { key: who.agent.api_key, json: { html: "<p>g</p>", manifest: manifest(GUARDED) } });
    const e = await expectError(res, 400, "manifest_invalid");
    expect(JSON.stringify(e.details)).toContain("guestbook");
    expect(JSON.stringify(e.details)).toContain("antiAbuse");
    const listed = await json<{ items: unknown[] }>(await call("/v1/apps", { key: who.agent.api_key }), 200);
    expect(listed.items).toEqual([]);
    // With both keys the same deploy goes through.
    const ok = await callWith({ ...production, TURNSTILE_SECRET_KEY: "0x4AAAAAAAsecret" }, "/v1/apps", { key: who.agent.api_key, json: { html: "<p>g</p>", manifest: manifest(GUARDED) } });
    expect(ok.status).toBe(201);
  });
});

describe("TURNSTILE_* settings", () => {
  it("development falls back to the test site key; production needs one", () => {
    expect(config({}).turnstile).toBeNull();
    expect(config({ TURNSTILE_SITE_KEY: " " }).turnstile).toBeNull();
    expect(config({ RELAY_ENV: "development" }).turnstile).toEqual({ siteKey: TURNSTILE_TEST_SITE_KEY, scriptUrl: TURNSTILE_SCRIPT_DEFAULT });
    expect(config({ TURNSTILE_SITE_KEY: "0x4AAA", TURNSTILE_SECRET_KEY: "s" }).turnstile).toEqual({ siteKey: "0x4AAA", scriptUrl: TURNSTILE_SCRIPT_DEFAULT });
    // A site key without the secret to verify its tokens is no challenge at all.
    expect(config({ TURNSTILE_SITE_KEY: "0x4AAA" }).turnstile).toBeNull();
  });

  it("takes an https script URL (plain http too in development), else Cloudflare's", () => {
    const script = (vars: Record<string, string>) => config({ TURNSTILE_SITE_KEY: "k", TURNSTILE_SECRET_KEY: "s", ...vars }).turnstile?.scriptUrl;
    expect(script({ TURNSTILE_SCRIPT_URL: "https://cdn.example.com/t.js" })).toBe("https://cdn.example.com/t.js");
    expect(script({ TURNSTILE_SCRIPT_URL: "http://127.0.0.1:9/t.js" })).toBe(TURNSTILE_SCRIPT_DEFAULT);
    expect(script({ RELAY_ENV: "development", TURNSTILE_SCRIPT_URL: "http://127.0.0.1:9/t.js" })).toBe("http://127.0.0.1:9/t.js");
    expect(script({ TURNSTILE_SCRIPT_URL: "javascript:alert(1)" })).toBe(TURNSTILE_SCRIPT_DEFAULT);
    expect(script({ TURNSTILE_SCRIPT_URL: "https://user:pw@cdn.example.com/t.js" })).toBe(TURNSTILE_SCRIPT_DEFAULT);
    expect(script({ TURNSTILE_SCRIPT_URL: "not a url" })).toBe(TURNSTILE_SCRIPT_DEFAULT);
  });
});
