// No input produces a 500 on an app origin: odd paths, verbs, headers, credentials,
// ranges and bodies across public, private and link apps all get a catalogue answer or
// a plain page, and none of them sets a cookie.
import { describe, expect, it } from "vitest";
import { SDK_HASH } from "../../../src/page-script/bundle.generated";
import { appCall, ASSETS, deploy, owner, type AppCallOptions } from "./helpers";

const paths = [
  "/", "/index.html", "/pic.png", "/notes.txt", "/_svc/session", `/_svc/sdk.${SDK_HASH}.js`, "/_svc/x", "/robots.txt",
  "/favicon.ico", "/b/x", "/sitemap.xml", "/.well-known/security.txt", "/%ff", "/%", "/a?svc_pass=", "/pic.png?svc_pass=%00",
  "/pic.png?svc_pass=zzzzzzzzzzz.aaaaaaaaaaaaaaaaaaaaaaaa", "/?k=1", `/${"a".repeat(3000)}`,
];

const variants: AppCallOptions[] = [
  {},
  { method: "HEAD" },
  { method: "POST", body: "{" , headers: { "content-type": "application/json" } },
  { method: "POST", json: { grant: null } },
  { method: "OPTIONS" },
  { method: "PUT", body: "x" },
  { token: "a.b.c" },
  { token: "x".repeat(5000) },
  { token: "eyJhbGciOiJub25lIn0.eyJhcHAiOiJ4In0." },
  { headers: { authorization: "Bearer" } },
  { share: "" },
  { share: "z".repeat(5000) },
  { headers: { range: "bytes=--1" } },
  { headers: { range: "bytes=0-0,-1" } },
  { headers: { "if-none-match": "\"" } },
  { headers: { cookie: "relay_session=sess_deadbeef" } },
];

/** Every path with a few plain variants, and every variant on a few telling paths. */
function cases(): Array<[string, AppCallOptions]> {
  const out: Array<[string, AppCallOptions]> = [];
  for (const path of paths) for (const opts of variants.slice(0, 4)) out.push([path, opts]);
  for (const path of ["/", "/pic.png", "/_svc/session"]) for (const opts of variants.slice(4)) out.push([path, opts]);
  return out;
}

describe("hostile input on app origins", () => {
  it("never answers 500 and never sets a cookie", async () => {
    const who = await owner();
    const apps = await Promise.all(["public", "private", "link"].map((visibility) => deploy(who, { visibility, assets: ASSETS })));
    for (const app of apps) {
      for (const [path, opts] of cases()) {
        const res = await appCall(app.slug, path, opts);
        await res.arrayBuffer();
        const label = `${app.visibility} ${opts.method ?? "GET"} ${path.slice(0, 80)} ${JSON.stringify(opts).slice(0, 120)}`;
        expect(res.status, label).toBeLessThan(500);
        expect(res.headers.get("set-cookie"), label).toBeNull();
      }
    }
  }, 120_000);
});
