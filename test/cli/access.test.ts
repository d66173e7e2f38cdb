// `service credentials ...` and `service grants ...` as real processes against the real
// test relay: a read-only credential minted for one collection lists that collection over
// plain HTTP and nothing else (other collections, writes, the app and key routes); pause,
// resume, rotate and revoke print their outputs and take effect on the next request; the
// grant verbs mint a link whose #g= token the app origin exchanges, list it without
// token material, and revoke it; local flag errors are invalid_args and touch nothing.
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempHomes, fakeIp, mintClaimCode, relayUrl, runCli, signIn, tempHome, type CliRun, type RunOptions } from "./helpers.ts";

type Obj = Record<string, unknown>;

function manifest(): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    "x-service-manifest": {
      app: { name: "Access" },
      collections: {
        orders: { read: ["owner", "guest"], write: ["owner"], delete: ["owner"] },
        secrets: { read: ["owner"], write: ["owner"], delete: ["owner"] },
      },
      roles: { guest: { label: "Guest" } },
    },
  };
}

interface Agent {
  key: string;
  ip: string;
  cli(args: string[], options?: RunOptions): Promise<CliRun>;
}

async function claimedAgent(): Promise<Agent> {
  const base = relayUrl();
  const ip = fakeIp();
  const reg = await fetch(`${base}/v1/register`, {
    method: "POST", headers: { "content-type": "application/json", "cf-connecting-ip": ip }, body: JSON.stringify({ name: "cli-access-test" }),
  });
  expect(reg.status).toBe(201);
  const key = ((await reg.json()) as { api_key: string }).api_key;
  const code = await mintClaimCode(await signIn());
  const claim = await fetch(`${base}/v1/agents/claim`, {
    method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "cf-connecting-ip": ip }, body: JSON.stringify({ code }),
  });
  expect(claim.status).toBe(200);
  const home = tempHome();
  return { key, ip, cli: (args, options = {}) => runCli(home, args, { ...options, env: { SERVICE_URL: base, SERVICE_API_KEY: key, ...options.env } }) };
}

function ok(run: CliRun): CliRun {
  expect(run.code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
  return run;
}

function failed(run: CliRun, code: string) {
  expect(run.code, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(1);
  expect(run.stdout).toBe("");
  const error = run.error();
  expect(error.code).toBe(code);
  return error;
}

/** A plain HTTP call to the relay with a bearer, as a backend would make it. */
async function api(path: string, token: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: Obj }> {
  const res = await fetch(`${relayUrl()}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${token}`, "cf-connecting-ip": fakeIp(), ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, body: (await res.json()) as Obj };
}

function codeOf(answer: { body: Obj }): string | undefined {
  return (answer.body.error as { code?: string } | undefined)?.code;
}

/** A POST to the app's own origin (Node's fetch cannot resolve *.localhost, so the Host is set by hand). */
function appPost(slug: string, path: string, body: unknown): Promise<{ status: number; body: Obj }> {
  const base = new URL(relayUrl());
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({
      host: "127.0.0.1", port: base.port, path, method: "POST",
      headers: { host: `${slug}.localhost:${base.port}`, "content-type": "application/json", "content-length": Buffer.byteLength(payload), "cf-connecting-ip": fakeIp() },
    }, (res) => {
      let text = "";
      res.on("data", (d) => { text += d; });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Obj }));
    });
    req.on("error", reject);
    req.end(payload);
  });
}

afterAll(() => cleanupTempHomes());

describe("credentials and grants from the CLI", () => {
  let me: Agent;
  let appId: string;
  const slug = `access-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    me = await claimedAgent();
    const res = await fetch(`${relayUrl()}/v1/apps`, {
      method: "POST",
      headers: { authorization: `Bearer ${me.key}`, "content-type": "application/json", "cf-connecting-ip": me.ip },
      body: JSON.stringify({ html: "<p>access</p>", manifest: manifest(), slug }),
    });
    expect(res.status).toBe(201);
    appId = ((await res.json()) as { app_id: string }).app_id;
    for (const [collection, key] of [["orders", "o1"], ["orders", "o2"], ["secrets", "s1"]]) {
      expect((await api(`/v1/apps/${appId}/collections/${collection}`, me.key, { body: { key, data: { n: key } } })).status).toBe(201);
    }
  });

  it("a read-only credential for one collection lists it and nothing else", async () => {
    const minted = ok(await me.cli(["credentials", "mint", "--app", slug, "--grants", '[{"collection":"orders","ops":["read"]}]', "--label", "backend"])).json<Obj>();
    expect(minted).toMatchObject({ mode: "explicit", grants: [{ collection: "orders", ops: ["read"] }], members: false, label: "backend" });
    const token = minted.token as string;
    expect(token).toMatch(/^svcs_[0-9a-f]{32}$/);

    const listed = await api(`/v1/apps/${appId}/collections/orders`, token);
    expect(listed.status).toBe(200);
    expect((listed.body.rows as Array<{ key: string }>).map((r) => r.key).sort()).toEqual(["o1", "o2"]);
    expect((await api(`/v1/apps/${appId}/collections/orders/o1`, token)).status).toBe(200);

    const other = await api(`/v1/apps/${appId}/collections/secrets`, token);
    expect([other.status, codeOf(other)]).toEqual([403, "credential_scope_forbidden"]);
    const write = await api(`/v1/apps/${appId}/collections/orders`, token, { body: { data: { n: "x" } } });
    expect([write.status, codeOf(write)]).toEqual([403, "credential_scope_forbidden"]);
    for (const path of ["/v1/apps", `/v1/apps/${appId}`, "/v1/keys", `/v1/apps/${appId}/credentials`, `/v1/apps/${appId}/grants`, `/v1/apps/${appId}/members`, `/v1/apps/${appId}/feed?since=0`]) {
      const refused = await api(path, token);
      expect([path, refused.status, codeOf(refused)]).toEqual([path, 401, "unauthorized"]);
    }

    const list = ok(await me.cli(["credentials", "list", "--app", slug]));
    expect(list.stdout).not.toContain(token);
    const credentials = list.json<{ credentials: Obj[] }>().credentials;
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ id: minted.id, token_prefix: token.slice(0, 12), active: true, paused: false });
  });

  it("pause, resume, rotate and revoke print their outputs and act on the next request", async () => {
    const minted = ok(await me.cli(["credentials", "mint", "--app", appId, "--grants", '[{"collection":"orders","ops":["read"]}]', "--no-expiry"])).json<Obj>();
    expect(minted.expires_at).toBeNull();
    const id = minted.id as string;
    const path = `/v1/apps/${appId}/collections/orders`;

    expect(ok(await me.cli(["credentials", "pause", "--app", slug, "--credential", id])).json()).toEqual({ paused: true, app_id: appId, credential_id: id });
    expect((await api(path, minted.token as string)).status).toBe(401);
    expect(ok(await me.cli(["credentials", "resume", "--app", slug, "--credential", id])).json()).toEqual({ resumed: true, app_id: appId, credential_id: id });
    expect((await api(path, minted.token as string)).status).toBe(200);

    const rotated = ok(await me.cli(["credentials", "rotate", "--app", slug, "--credential", id, "--overlap", "0"])).json<Obj>();
    expect(rotated).toMatchObject({ id, previous_expires_at: null });
    expect((await api(path, minted.token as string)).status).toBe(401);
    expect((await api(path, rotated.token as string)).status).toBe(200);
    const overlapping = ok(await me.cli(["credentials", "rotate", "--app", slug, "--credential", id])).json<Obj>();
    expect(overlapping.previous_expires_at).toEqual(expect.any(String));
    expect((await api(path, rotated.token as string)).status).toBe(200);

    expect(ok(await me.cli(["credentials", "revoke", "--app", slug, "--credential", id])).json()).toEqual({ revoked: true, app_id: appId, credential_id: id });
    expect((await api(path, rotated.token as string)).status).toBe(401);
    expect((await api(path, overlapping.token as string)).status).toBe(401);
    failed(await me.cli(["credentials", "resume", "--app", slug, "--credential", id]), "conflict");
    failed(await me.cli(["credentials", "pause", "--app", slug, "--credential", "cred_missing"]), "not_found");
  });

  it("refuses bad flags locally and passes the relay's refusals through", async () => {
    const before = ok(await me.cli(["credentials", "list", "--app", slug])).json<{ credentials: Obj[] }>().credentials.length;
    failed(await me.cli(["credentials", "mint", "--app", slug, "--ttl", "60", "--no-expiry"]), "invalid_args");
    failed(await me.cli(["credentials", "mint", "--app", slug, "--ttl", "soon"]), "invalid_args");
    failed(await me.cli(["credentials", "mint", "--app", slug, "--grants", "{not json"]), "invalid_args");
    failed(await me.cli(["credentials", "mint", "--app", slug, "--grants", '{"collection":"orders"}']), "invalid_args");
    failed(await me.cli(["credentials", "mint", "--app", slug, "--mode", "loose"]), "invalid_args");
    failed(await me.cli(["credentials", "mint", "--grants", "[]"]), "invalid_args");
    failed(await me.cli(["credentials", "pause", "--app", slug]), "invalid_args");
    failed(await me.cli(["credentials", "rotate", "--app", slug, "--credential", "x", "--overlap", "-1"]), "invalid_args");
    failed(await me.cli(["credentials", "mint", "--app", slug, "--grants", '[{"collection":"nope","ops":["read"]}]']), "invalid_request");
    failed(await me.cli(["credentials", "list", "--app", "no-such-app-here"]), "app_not_found");
    expect(ok(await me.cli(["credentials", "list", "--app", slug])).json<{ credentials: Obj[] }>().credentials).toHaveLength(before);
  });

  it("grants: mint a link the app origin exchanges, list it without tokens, revoke it", async () => {
    const minted = ok(await me.cli(["grants", "mint", "--app", slug, "--role", "guest", "--mode", "once", "--label", "for Sam", "--ttl", "3600"])).json<Obj>();
    expect(minted).toMatchObject({ role: "guest", mode: "once", max_uses: 1, label: "for Sam", active: true });
    const url = minted.grant_url as string;
    const match = /^http:\/\/([a-z0-9-]+)\.localhost:\d+\/#g=(gr_[0-9a-f]{32})$/.exec(url);
    expect(match, url).not.toBeNull();
    expect(match![1]).toBe(slug);
    const token = match![2];

    const first = await appPost(slug, "/_svc/grant", { grant: token });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ grant_id: minted.id, role: "guest", reused: false });
    expect(first.body.token).toMatch(/^grh_[0-9a-f]{32}$/);
    const second = await appPost(slug, "/_svc/grant", { grant: token });
    expect([second.status, codeOf(second)]).toEqual([401, "grant_invalid"]);

    const pinned = ok(await me.cli(["grants", "mint", "--app", slug, "--role", "guest", "--max-uses", "3", "--pin-where", '[{"field":"n","op":"eq","value":"o1"}]'])).json<Obj>();
    expect(pinned).toMatchObject({ mode: "multi", max_uses: 3, pin_where: [{ field: "n", op: "eq", value: "o1" }] });

    const list = ok(await me.cli(["grants", "list", "--app", slug]));
    expect(list.stdout).not.toContain(token);
    expect(list.stdout).not.toContain("grant_url");
    const grants = list.json<{ grants: Obj[] }>().grants;
    expect(grants.map((g) => g.id)).toEqual([pinned.id, minted.id]);
    expect(grants[1]).toMatchObject({ use_count: 1, claim_count: 1 });

    expect(ok(await me.cli(["grants", "revoke", "--app", slug, "--grant", pinned.id as string])).json()).toEqual({ revoked: true, app_id: appId, grant_id: pinned.id });
    expect(ok(await me.cli(["grants", "revoke", "--app", slug, "--grant", pinned.id as string])).json()).toEqual({ revoked: true, app_id: appId, grant_id: pinned.id });
    const afterRevoke = await appPost(slug, "/_svc/grant", { grant: /#g=(.+)$/.exec(pinned.grant_url as string)![1] });
    expect([afterRevoke.status, codeOf(afterRevoke)]).toEqual([401, "grant_invalid"]);

    failed(await me.cli(["grants", "mint", "--app", slug, "--role", "member"]), "invalid_request");
    failed(await me.cli(["grants", "mint", "--app", slug]), "invalid_args");
    failed(await me.cli(["grants", "mint", "--app", slug, "--role", "guest", "--pin-row", "o1", "--pin-where", "[]"]), "invalid_args");
    failed(await me.cli(["grants", "mint", "--app", slug, "--role", "guest", "--mode", "twice"]), "invalid_args");
    failed(await me.cli(["grants", "revoke", "--app", slug, "--grant", "grant_missing"]), "not_found");
    failed(await me.cli(["grants", "revoke", "--app", slug]), "invalid_args");
  });
});
