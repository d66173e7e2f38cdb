// Visibility gates. A private or link app's plain request gets the gate shell (no app
// content); the document comes back only when the request carries a credential in a
// header: an app-session token of someone with access, or a link app's CURRENT share
// token. Tokens for another app, expired, forged or signed with another key are refused,
// rotation kills old share links at once, and a production relay without
// APP_SESSION_SECRET answers 503 instead of signing anything.
import { env } from "cloudflare:test";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../helpers";
import { signingKeys } from "../../../src/auth/signing-keys";
import { appCall, appCallWith, ASSETS, deploy, manifest, owner, ownerToken, shareToken, type Deployed } from "./helpers";

const SECRET_BODY = "Secret page body";

async function devToken(claims: { app: string; kind?: string }, sub: string, exp: number, key?: Uint8Array): Promise<string> {
  const keys = await signingKeys(env)!;
  return new SignJWT({ kind: "owner", ...claims }).setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(sub).setAudience("service-app-session").setIssuedAt(exp - 3600).setExpirationTime(exp).sign(key ?? keys.session);
}

function passOf(text: string, path: string): string {
  const match = new RegExp(`/${path.replace(/[.]/g, "\\.")}\\?svc_pass=([0-9a-z]+\\.[A-Za-z0-9_-]+)`).exec(text);
  expect(match, `no pass for ${path}`).not.toBeNull();
  return match![1];
}

describe("private apps", () => {
  it("show the gate shell to an anonymous visitor: the name, no content, no other manifest facts", async () => {
    const app = await deploy(await owner(), { visibility: "private", manifest: manifest({ name: "Family budget", description: "Our money", icon: "💰" }), assets: ASSETS });
    const res = await appCall(app.slug, "/");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('id="svc-gate"');
    expect(text).toContain('data-visibility="private"');
    expect(text).toContain("<title>Family budget</title>");
    expect(text).not.toContain(SECRET_BODY);
    expect(text).not.toContain("Our money");
    expect(text).not.toContain("💰");
    expect(text).not.toContain("pic.png");
    expect(text).not.toContain("/_svc/sdk.");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-security-policy")).toContain("connect-src 'self'");
    expect(res.headers.get("x-robots-tag")).toBe("noindex, nofollow");
    // The index path is gated the same way.
    expect(await (await appCall(app.slug, "/index.html")).text()).not.toContain(SECRET_BODY);
  });

  it("serve the document to the owner's app session, uncached", async () => {
    const who = await owner();
    const app = await deploy(who, { visibility: "private" });
    const token = await ownerToken(who.human, app.slug);
    const res = await appCall(app.slug, "/", { token });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(SECRET_BODY);
    expect(text).toContain("/_svc/sdk.");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("vary")).toContain("Authorization");
  });

  it("refuse a token for another app, an expired, forged or foreign-key token, and garbage", async () => {
    const who = await owner();
    const a = await deploy(who, { visibility: "private" });
    const b = await deploy(who, { visibility: "private" });
    const tokenA = await ownerToken(who.human, a.slug);
    const now = Math.floor(Date.now() / 1000);
    const stranger = await owner();
    const refused: Array<[string, string]> = [
      ["token for another app", tokenA],
      ["expired", await devToken({ app: b.app_id }, who.human.humanId, now - 60)],
      ["someone without access", await devToken({ app: b.app_id }, stranger.human.humanId, now + 3600)],
      ["unknown kind", await devToken({ app: b.app_id, kind: "admin" }, who.human.humanId, now + 3600)],
      ["another key", await devToken({ app: b.app_id }, who.human.humanId, now + 3600, new TextEncoder().encode("x".repeat(32)))],
      ["garbage", "not-a-token"],
      ["empty scheme", ""],
    ];
    for (const [why, token] of refused) {
      const res = await appCall(b.slug, "/", token === "" ? { headers: { authorization: "Basic abc" } } : { token });
      const e = await expectError(res, 401, "unauthorized");
      expect(e.message, why).toContain("private");
    }
    // The same checks hold for GET /_svc/session.
    await expectError(await appCall(b.slug, "/_svc/session", { token: tokenA }), 401, "unauthorized");
  });

  it("a share header opens nothing on a private app", async () => {
    const app = await deploy(await owner(), { visibility: "private" });
    await expectError(await appCall(app.slug, "/", { share: "0".repeat(32) }), 401, "unauthorized");
  });

  it("stop opening once the owner no longer owns the app", async () => {
    const who = await owner();
    const app = await deploy(who, { visibility: "private" });
    const token = await ownerToken(who.human, app.slug);
    const other = await owner();
    await env.DB.prepare("UPDATE apps SET owner_human_id = ?1 WHERE id = ?2").bind(other.human.humanId, app.app_id).run();
    await expectError(await appCall(app.slug, "/", { token }), 401, "unauthorized");
  });
});

describe("link apps", () => {
  async function linkApp(): Promise<{ who: Awaited<ReturnType<typeof owner>>; app: Deployed; token: string }> {
    const who = await owner();
    const app = await deploy(who, { visibility: "link", assets: ASSETS });
    return { who, app, token: shareToken(app) };
  }

  it("show the shell without a token and the document with the share token in a header", async () => {
    const { app, token } = await linkApp();
    const shell = await appCall(app.slug, "/");
    const shellText = await shell.text();
    expect(shellText).toContain('data-visibility="link"');
    expect(shellText).not.toContain(SECRET_BODY);
    const doc = await appCall(app.slug, "/", { share: token });
    expect(doc.status).toBe(200);
    expect(await doc.text()).toContain(SECRET_BODY);
    await expectError(await appCall(app.slug, "/", { share: "f".repeat(32) }), 401, "unauthorized");
    await expectError(await appCall(app.slug, "/", { share: "short" }), 401, "unauthorized");
  });

  it("refuse the old token right after a rotation and accept the new one", async () => {
    const { who, app, token } = await linkApp();
    expect((await appCall(app.slug, "/", { share: token })).status).toBe(200);
    const rotated = await json<{ share_url: string }>(await call(`/v1/apps/${app.app_id}/share-link/rotate`, { method: "POST", key: who.agent.api_key, json: {} }), 200);
    const fresh = /#k=([0-9a-f]+)$/.exec(rotated.share_url)![1];
    expect(fresh).not.toBe(token);
    await expectError(await appCall(app.slug, "/", { share: token }), 401, "unauthorized");
    expect(await (await appCall(app.slug, "/", { share: fresh })).text()).toContain(SECRET_BODY);
  });

  it("open for the owner's app session without the share token", async () => {
    const { who, app } = await linkApp();
    const token = await ownerToken(who.human, app.slug);
    expect(await (await appCall(app.slug, "/", { token })).text()).toContain(SECRET_BODY);
  });
});

describe("asset passes on gated apps", () => {
  it("the served document carries per-path passes that open exactly those assets", async () => {
    const who = await owner();
    const app = await deploy(who, { visibility: "private", assets: ASSETS });
    const token = await ownerToken(who.human, app.slug);
    const text = await (await appCall(app.slug, "/", { token })).text();
    const picPass = passOf(text, "pic.png");
    passOf(text, "notes.txt");
    // Foreign and missing URLs are left alone.
    expect(text).toContain('<img src="https://cdn.example.com/x.png">');
    expect(text).toContain('<img src="/missing.png">');

    expect((await appCall(app.slug, "/pic.png")).status).toBe(401);
    const pic = await appCall(app.slug, `/pic.png?svc_pass=${picPass}`);
    expect(pic.status).toBe(200);
    expect(pic.headers.get("content-type")).toBe("image/png");
    expect(pic.headers.get("cache-control")).toBe("private, max-age=60");
    // A pass opens only its own path, and a tampered one opens nothing.
    expect((await appCall(app.slug, `/notes.txt?svc_pass=${picPass}`)).status).toBe(401);
    const tampered = picPass.slice(0, -1) + (picPass.endsWith("A") ? "B" : "A");
    expect((await appCall(app.slug, `/pic.png?svc_pass=${tampered}`)).status).toBe(401);
    expect((await appCall(app.slug, "/pic.png?svc_pass=zzzz")).status).toBe(401);
    // The header credential works for assets too.
    expect((await appCall(app.slug, "/notes.txt", { token })).status).toBe(200);
  });

  it("an expired pass is refused", async () => {
    const { mintAssetPass } = await import("../../../src/auth/asset-pass");
    const who = await owner();
    const app = await deploy(who, { visibility: "private", assets: ASSETS });
    const keys = await signingKeys(env)!;
    const old = await mintAssetPass(keys, app.app_id, null, "pic.png", Date.now() - 3 * 3600_000);
    expect((await appCall(app.slug, `/pic.png?svc_pass=${old}`)).status).toBe(401);
    const current = await mintAssetPass(keys, app.app_id, null, "pic.png");
    expect((await appCall(app.slug, `/pic.png?svc_pass=${current}`)).status).toBe(200);
  });

  it("rotating a link app's share token voids the passes minted under it", async () => {
    const who = await owner();
    const app = await deploy(who, { visibility: "link", assets: ASSETS });
    const text = await (await appCall(app.slug, "/", { share: shareToken(app) })).text();
    const pass = passOf(text, "pic.png");
    expect((await appCall(app.slug, `/pic.png?svc_pass=${pass}`)).status).toBe(200);
    await json(await call(`/v1/apps/${app.app_id}/share-link/rotate`, { method: "POST", key: who.agent.api_key, json: {} }), 200);
    expect((await appCall(app.slug, `/pic.png?svc_pass=${pass}`)).status).toBe(401);
  });

  it("public documents get no passes", async () => {
    const app = await deploy(await owner(), { assets: ASSETS });
    const text = await (await appCall(app.slug, "/")).text();
    expect(text).not.toContain("svc_pass");
    expect(text).toContain('<img src="pic.png" alt="pic">');
  });
});

describe("public apps", () => {
  it("serve the document whatever credential comes along", async () => {
    const app = await deploy(await owner());
    for (const opts of [{}, { token: "garbage" }, { share: "nope" }]) {
      const res = await appCall(app.slug, "/", opts);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain(SECRET_BODY);
    }
  });
});

describe("without APP_SESSION_SECRET in production", () => {
  const production = { RELAY_ENV: "production", APP_SESSION_SECRET: undefined };

  it("gated apps answer a clear 503 page and public apps keep working", async () => {
    const who = await owner();
    const gated = await deploy(who, { visibility: "private", assets: ASSETS });
    const link = await deploy(who, { visibility: "link" });
    const open = await deploy(who);
    for (const slug of [gated.slug, link.slug]) {
      const res = await appCallWith(production, slug, "/");
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(text).toContain("APP_SESSION_SECRET");
      expect(text).not.toContain(SECRET_BODY);
    }
    expect((await appCallWith(production, gated.slug, "/pic.png")).status).toBe(503);
    const e = await expectError(await appCallWith(production, gated.slug, "/_svc/session", { json: { grant: "sgr_" + "0".repeat(32) } }), 503, "auth_provider_unavailable");
    expect(e.details).toEqual({ reason: "app_session_secret_missing" });
    const pub = await appCallWith(production, open.slug, "/");
    expect(pub.status).toBe(200);
    expect(await pub.text()).toContain(SECRET_BODY);
  });

  it("a short secret counts as missing; a proper one works, and development tokens do not carry over", async () => {
    const who = await owner();
    const gated = await deploy(who, { visibility: "private" });
    expect((await appCallWith({ ...production, APP_SESSION_SECRET: "too-short" }, gated.slug, "/")).status).toBe(503);
    const withSecret = { ...production, APP_SESSION_SECRET: "p".repeat(40) };
    const shell = await appCallWith(withSecret, gated.slug, "/");
    expect(shell.status).toBe(200);
    expect(await shell.text()).toContain('id="svc-gate"');
    const devSession = await ownerToken(who.human, gated.slug);
    await expectError(await appCallWith(withSecret, gated.slug, "/", { token: devSession }), 401, "unauthorized");
  });
});
