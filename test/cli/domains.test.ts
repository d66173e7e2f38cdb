// `service apps domain show|add|remove` as a real process against the real test relay:
// add prints the DNS records, a second domain redirects to the first, show lists both,
// the serving domain answers the app's page when a request names it in its Host header
// (development), remove of one and of all, and the refusals (unknown action, add without
// a domain, a bad domain) with their codes.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appPackage, cleanupTempHomes, claimedCliAgent, failed, ok, relayUrl, type CliAgent } from "./helpers.ts";

const manifest = { "x-service-manifest": { app: { name: "Photos" }, collections: {} } };

/** GET / on the relay with another Host header (fetch may not set Host; node:http may). */
function getWithHost(host: string, path = "/"): Promise<{ status: number; location: string | undefined; body: string }> {
  const base = new URL(relayUrl());
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname: base.hostname, port: base.port, path, headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => { body += chunk; });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

afterAll(() => {
  cleanupTempHomes();
});

describe("apps domain", () => {
  let me: CliAgent;
  let slug: string;
  const suffix = Math.random().toString(36).slice(2, 8);
  const first = `photos-${suffix}.example.org`;
  const second = `pics-${suffix}.example.org`;

  beforeAll(async () => {
    me = await claimedCliAgent("cli-domain-test");
    slug = ok(await me.cli(["deploy", appPackage(manifest, "photos"), "--visibility", "public"])).json<{ slug: string }>().slug;
  });

  it("adds, shows, serves by Host, redirects an alias and removes", async () => {
    const added = ok(await me.cli(["apps", "domain", "add", slug, first])).json<{ domain: string; primary: boolean; dns_records: Array<{ type: string; name: string }> }>();
    expect(added.domain).toBe(first);
    expect(added.primary).toBe(true);
    expect(added.dns_records.map((r) => r.type)).toEqual(["CNAME", "TXT"]);
    const alias = ok(await me.cli(["apps", "domain", "add", slug, second])).json<{ redirect_to: string }>();
    expect(alias.redirect_to).toBe(first);

    const page = await getWithHost(first);
    expect(page.status).toBe(200);
    expect(page.body).toContain("<h1>photos</h1>");
    const moved = await getWithHost(second, "/a?b=1");
    expect(moved.status).toBe(301);
    expect(moved.location).toBe(`http://${first}/a?b=1`);

    const shown = ok(await me.cli(["apps", "domain", "show", slug])).json<{ domain: string; status: string; aliases: Array<{ domain: string }> }>();
    expect(shown.domain).toBe(first);
    expect(shown.status).toBe("active");
    expect(shown.aliases.map((a) => a.domain)).toEqual([second]);

    ok(await me.cli(["apps", "domain", "remove", slug, second]));
    expect(ok(await me.cli(["apps", "domain", "show", slug])).json<{ aliases: unknown[] }>().aliases).toEqual([]);
    ok(await me.cli(["apps", "domain", "remove", slug]));
    failed(await me.cli(["apps", "domain", "show", slug]), "domain_not_found");
  });

  it("refuses unknown actions, add without a domain and bad domains", async () => {
    failed(await me.cli(["apps", "domain", "list", slug]), "invalid_args");
    failed(await me.cli(["apps", "domain", "add", slug]), "invalid_args");
    failed(await me.cli(["apps", "domain", "show", slug, first]), "invalid_args");
    failed(await me.cli(["apps", "domain", "add", slug, "*.example.org"]), "domain_invalid");
  });
});
