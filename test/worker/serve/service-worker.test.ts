// `/_svc/sw.js` on an app origin: the relay's service worker for push notifications is
// served as JavaScript a page may register for the whole origin (Service-Worker-Allowed),
// under a CSP that lets it load nothing, on every app's origin; an author can never
// deploy an asset at that path.
import { describe, expect, it } from "vitest";
import { call, expectError } from "../helpers";
import { SERVICE_WORKER_SOURCE } from "../../../src/http/serve/service-worker";
import { appCall, deploy, manifest, owner } from "./helpers";

describe("GET /_svc/sw.js", () => {
  it("answers the service worker with its headers on a public app's origin", async () => {
    const app = await deploy(await owner(), { manifest: manifest({}, { offline: true }) });
    const res = await appCall(app.slug, "/_svc/sw.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("service-worker-allowed")).toBe("/");
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.has("set-cookie")).toBe(false);
    const source = await res.text();
    expect(source).toBe(SERVICE_WORKER_SOURCE);
    expect(source).toContain('addEventListener("push"');
    expect(source).toContain('addEventListener("notificationclick"');
    expect(source).not.toContain('addEventListener("fetch"');
  });

  it("is the same fixed script on every app origin, private ones too; other methods are refused", async () => {
    const who = await owner();
    for (const visibility of ["private", "link"]) {
      const app = await deploy(who, { visibility });
      const res = await appCall(app.slug, "/_svc/sw.js");
      expect(res.status, visibility).toBe(200);
      expect(await res.text()).toBe(SERVICE_WORKER_SOURCE);
    }
    const app = await deploy(who);
    expect((await appCall(app.slug, "/_svc/sw.js", { method: "POST", body: "x" })).status).not.toBe(200);
    expect((await appCall(app.slug, "/_svc/sw.jsx")).status).toBe(404);
  });

  it("an author cannot deploy an asset at _svc/sw.js", async () => {
    const who = await owner();
    const res = await call("/v1/apps", {
      key: who.agent.api_key,
      json: { html: "<p>x</p>", manifest: manifest(), visibility: "public", assets: [{ path: "_svc/sw.js", content_base64: btoa("self.x = 1;") }] },
    });
    const err = await expectError(res, 400, "invalid_request");
    expect(err.message).toContain("reserved");
    expect(err.details).toMatchObject({ path: "_svc/sw.js" });
  });
});
