// Custom domains (issue 13 item 6): binding answers the DNS records; the first domain
// serves the app under its own host (a request's host picks it, as a Host header does in
// development) and turns active; a later one redirects to it; show reads both; removing
// the serving one takes its aliases; bad, taken and repeated domains get their codes and
// bind nothing; a relay without custom-domain support answers 501.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, dispatch, expectError, json } from "../helpers";
import { deploy, owner, PAGE } from "../serve/helpers";
import { waitFor } from "../../support/wait";

type Domain = { domain: string; app_id: string; primary: boolean; redirect_to: string | null; status: string; dns_records: Array<{ type: string; name: string; value: string }>; active_since: string | null };

function unique(label: string): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}.example.org`;
}

async function boundCount(domain: string): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM app_domains WHERE domain = ?").bind(domain).first<{ n: number }>())!.n;
}

describe("custom domains", { timeout: 60_000 }, () => {
  it("binds, serves the first domain, redirects the next, shows both live and removes them", async () => {
    const who = await owner();
    const app = await deploy(who);
    const key = who.agent.api_key;
    const first = unique("photos");
    const second = unique("pics");
    const bound = await json<Domain>(await call(`/v1/apps/${app.app_id}/domain`, { key, json: { domain: first.toUpperCase() + "." } }), 201);
    expect(bound).toMatchObject({ domain: first, app_id: app.app_id, primary: true, redirect_to: null, status: "pending_dns" });
    expect(bound.dns_records).toEqual([
      { type: "CNAME", name: first, value: "domains.localhost" },
      { type: "TXT", name: `_relay-challenge.${first}`, value: expect.stringMatching(/^relay-verify=[0-9a-f]{32}$/) },
    ]);
    const alias = await json<Domain>(await call(`/v1/apps/${app.app_id}/domain`, { key, json: { domain: second } }), 201);
    expect(alias).toMatchObject({ primary: false, redirect_to: first });

    const page = await dispatch(new Request(`http://${first}/`, { headers: { "cf-connecting-ip": "203.0.113.9" } }));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(PAGE.slice(0, 20));
    const moved = await dispatch(new Request(`http://${second}/photos?x=1`, { redirect: "manual" }));
    expect(moved.status).toBe(301);
    expect(moved.headers.get("location")).toBe(`http://${first}/photos?x=1`);

    const shown = await waitFor(async () => {
      const answer = await json<Domain & { aliases: Domain[] }>(await call(`/v1/apps/${app.app_id}/domain`, { key }), 200);
      return answer.status === "active" ? answer : null;
    }, { message: "the serving domain active" });
    expect(shown.domain).toBe(first);
    expect(shown.aliases.map((d) => [d.domain, d.redirect_to, d.status])).toEqual([[second, first, "pending_dns"]]);

    expect((await call(`/v1/apps/${app.app_id}/domain?domain=${first}`, { key, method: "DELETE" })).status).toBe(204);
    expect(await boundCount(second)).toBe(0);
    await expectError(await call(`/v1/apps/${app.app_id}/domain`, { key }), 404, "domain_not_found");
    // Unbound, the host is nobody's app: the API app answers it, not the page.
    const gone = await dispatch(new Request(`http://${first}/`, { redirect: "manual" }));
    expect(gone.status).not.toBe(200);
    expect(await gone.text()).not.toContain(PAGE.slice(0, 20));
    await json(await call(`/v1/apps/${app.app_id}/domain`, { key, json: { domain: first } }), 201);
    for (let i = 0; i < 2; i++) expect((await call(`/v1/apps/${app.app_id}/domain`, { key, method: "DELETE" })).status).toBe(204);
    expect(await boundCount(first)).toBe(0);
  });

  it("refuses bad, taken and repeated domains, changing nothing, and answers 501 without support", async () => {
    const who = await owner();
    const app = await deploy(who);
    const key = who.agent.api_key;
    for (const bad of ["", "localhost", "com", "*.example.org", "https://a.example.org", "a.example.org:8443", "10.0.0.1", "bad_label.example.org",
      "printer.local", "x.localhost", "app.example", `${app.slug}.localhost:8787`, "-a.example.org", "a".repeat(64) + ".example.org"]) {
      await expectError(await call(`/v1/apps/${app.app_id}/domain`, { key, json: { domain: bad } }), 400, "domain_invalid");
    }
    await expectError(await call(`/v1/apps/${app.app_id}/domain`, { key, json: { domain: 5 } }), 400, "invalid_request");
    const domain = unique("taken");
    await json(await call(`/v1/apps/${app.app_id}/domain`, { key, json: { domain } }), 201);
    await expectError(await call(`/v1/apps/${app.app_id}/domain`, { key, json: { domain } }), 409, "domain_exists");
    const other = await owner();
    const otherApp = await deploy(other);
    await expectError(await call(`/v1/apps/${otherApp.app_id}/domain`, { key: other.agent.api_key, json: { domain } }), 409, "domain_taken");
    expect(await boundCount(domain)).toBe(1);
    // Another owner's removal of it does nothing.
    expect((await call(`/v1/apps/${otherApp.app_id}/domain?domain=${domain}`, { key: other.agent.api_key, method: "DELETE" })).status).toBe(204);
    expect(await boundCount(domain)).toBe(1);
    await expectError(await call(`/v1/apps/${app.app_id}/domain`, { key: other.agent.api_key }), 404, "app_not_found");

    const off = { CUSTOM_DOMAINS_TARGET: "off" };
    await expectError(await callWith(off, `/v1/apps/${app.app_id}/domain`, { key, json: { domain: unique("off") } }), 501, "custom_domains_not_enabled");
    await expectError(await callWith(off, `/v1/apps/${app.app_id}/domain`, { key }), 501, "custom_domains_not_enabled");
    await expectError(await callWith(off, `/v1/apps/${app.app_id}/domain`, { key, method: "DELETE" }), 501, "custom_domains_not_enabled");
    expect(await boundCount(domain)).toBe(1);
  });
});
