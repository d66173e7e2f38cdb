// Issue 16, hostile input 4: the SSRF table on every outbound path, end to end, with the
// relay in production mode (RELAY_ENV=production through the Worker's own entry points).
// The pure guard has its own table (test/unit/effects/ssrf.test.ts); this file proves each
// path that fetches a URL someone else chose actually consults it:
// - at input time, where the spec refuses there: a manifest's webhook url, a connection's
//   allowedHost, authorizeUrl and tokenEndpoint, a push subscription's endpoint, an
//   attachment fetch's source_url — each its catalogue error, nothing stored;
// - at use time: a webhook delivery (the queue consumer, urlFromSetting read at send, and
//   a relative url on a connection's captured instance base), a push send, an oauth2
//   token request, an attachment fetch — refused, journaled, and the loopback receiver
//   (which development mode would reach) never hit;
// - redirects: a loopback receiver answering 302 is never followed on any path (in
//   development mode, the only mode where loopback may be reached at all);
// - DNS: the guard resolves at every send through its resolver hook, so an answer that
//   changes to a private address between two sends is refused on the second.
// Only loopback is ever contacted: every production-mode target here is refused before
// any name is resolved.
import { createExecutionContext, createMessageBatch, env, getQueueResult, runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import worker from "../../../workers/relay";
import { call, callWith, claimedAgent, expectError, json, signIn } from "../helpers";
import { holdEagerFlush } from "../effects/hold-outbox";
import { browser } from "../effects/push-service";
import { waitFor } from "../../support/wait";
import type { ReceivedRequest } from "../../support/webhook-receiver-types";
import { sendPush } from "../../../src/effects/notify/push";
import { refreshGrant, type OAuthProvider } from "../../../src/connections/oauth";
import { outboundFetch, type OutboundRequest } from "../../../src/effects/outbound-fetch";
import { getConnection, storeTokens } from "../../../src/db/connections";
import { seal, sealedPlace } from "../../../src/connections/sealing";

const receiver = inject("webhookReceiver");
type Obj = Record<string, unknown>;

/** The relay in production mode, with the secrets production wants for connections. */
const PRODUCTION = { RELAY_ENV: "production", CONNECTIONS_KEY: "a production connections key of 32+ characters" };

/** One URL per case of the table; each is refused in production before any name is resolved. */
const HOSTILE: ReadonlyArray<readonly [string, string]> = [
  ["private IPv4 10/8", "https://10.0.0.1/x"],
  ["private IPv4 172.16/12", "https://172.16.5.4/x"],
  ["private IPv4 192.168/16", "https://192.168.1.1/x"],
  ["loopback IPv4", "https://127.0.0.1/x"],
  ["shared address space 100.64/10", "https://100.64.0.1/x"],
  ["link-local metadata address", "https://169.254.169.254/latest/meta-data/"],
  ["this network 0/8", "https://0.0.0.0/x"],
  ["reserved 240/4", "https://240.0.0.1/x"],
  ["multicast", "https://224.0.0.1/x"],
  ["documentation range", "https://192.0.2.1/x"],
  ["IPv6 loopback", "https://[::1]/x"],
  ["IPv6 unique local", "https://[fd00:ec2::254]/x"],
  ["IPv6 link-local", "https://[fe80::1]/x"],
  ["IPv4-mapped IPv6, dotted", "https://[::ffff:10.0.0.1]/x"],
  ["IPv4-mapped IPv6, hex", "https://[::ffff:a9fe:a9fe]/x"],
  ["NAT64 IPv6", "https://[64:ff9b::a9fe:a9fe]/x"],
  ["6to4 IPv6", "https://[2002:7f00:1::]/x"],
  ["decimal IPv4", "https://2130706433/x"],
  ["octal IPv4", "https://0177.0.0.1/x"],
  ["hex IPv4, dotted", "https://0x7f.0x0.0x0.0x1/x"],
  ["hex IPv4, whole", "https://0xa9fea9fe/x"],
  ["short IPv4", "https://127.1/x"],
  ["IPv4 with a trailing dot", "https://127.0.0.1./x"],
  ["*.local", "https://printer.local/x"],
  ["*.internal", "https://db.corp.internal/x"],
  ["*.localhost", "https://app.localhost/x"],
  ["*.home.arpa", "https://router.home.arpa/x"],
  ["GCP metadata by name", "https://metadata.google.internal/computeMetadata/v1/"],
  ["metadata.goog", "https://metadata.goog/x"],
  ["Azure metadata by name", "https://metadata.azure.com/x"],
  ["userinfo", "https://user:pw@hooks.example.com/x"],
  ["userinfo, name only", "https://user@hooks.example.com/x"],
  ["plain http", "http://hooks.example.com/x"],
  ["loopback http (development only)", "http://127.0.0.1:9/x"],
  ["localhost (development only)", "http://localhost:9/x"],
];

/** The authority of a URL as written (what an allowedHost would be). */
function authorityOf(url: string): string {
  return url.replace(/^[a-z]+:\/\//, "").split("/")[0];
}

function inbox(label: string): string {
  return `ssrf-${label}-${crypto.randomUUID().slice(0, 8)}`;
}

async function receivedAt(name: string): Promise<ReceivedRequest[]> {
  return (await (await fetch(`${receiver}/log/${name}`)).json()) as ReceivedRequest[];
}

async function behave(name: string, behaviour: { status: number; location?: string }): Promise<void> {
  expect((await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify(behaviour) })).status).toBe(204);
}

/** Where a followed redirect would land: a loopback inbox (reachable in development) and private addresses. */
function redirectTargets(name: string): string[] {
  return [`${receiver}/hook/${name}-followed`, "http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.1]:9/"];
}

async function owner() {
  const human = await signIn();
  return { human, key: (await claimedAgent(human)).api_key };
}

function webhookManifest(rule: Obj, extra: Obj = {}): Obj {
  return {
    "x-service-manifest": {
      app: { name: "SSRF paths" },
      collections: { notes: { read: ["owner"], write: ["owner"], delete: ["owner"] }, settings: { read: ["owner"], write: ["owner"], delete: ["owner"] } },
      settingsCollection: "settings",
      webhooks: [{ on: "create", collection: "notes", ...rule }],
      ...extra,
    },
  };
}

async function appCount(key: string): Promise<number> {
  return (await json<{ items: unknown[] }>(await call("/v1/apps?limit=100", { key }), 200)).items.length;
}

interface Delivery { status: string; attempts: number; responseStatus: number | null; error: string | null; url: string }

async function deliveries(key: string, appId: string): Promise<Delivery[]> {
  return (await json<{ deliveries: Delivery[] }>(await call(`/v1/apps/${appId}/webhooks/deliveries?limit=100`, { key }), 200)).deliveries;
}

/**
 * Hands the app's one outbox entry (its store's own flush held) to the Worker's queue
 * consumer with a production-mode environment, and answers the newest delivery once its
 * attempt is journaled (the `count`th delivery of the app).
 */
async function deliverInProduction(key: string, appId: string, count: number, label: string): Promise<Delivery> {
  const stub = env.APP_STORE.get(env.APP_STORE.idFromName(appId));
  const [entry] = await runInDurableObject(stub, async (_instance, state) => {
    await state.storage.deleteAlarm();
    return state.storage.sql.exec<{ id: number; rule_id: string }>("SELECT id, rule_id FROM _svc_outbox ORDER BY id").toArray();
  });
  const pointer = { outbox_id: `${appId}:${entry.id}`, app_id: appId, entry_id: Number(entry.id), kind: "webhooks", rule_id: entry.rule_id };
  const batch = createMessageBatch("relay-effects", [{ id: `m-${count}`, timestamp: new Date(), attempts: 1, body: pointer }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...PRODUCTION } as Env, ctx);
  expect((await getQueueResult(batch, ctx)).explicitAcks, label).toEqual([`m-${count}`]);
  const [latest] = await waitFor(async () => {
    const list = await deliveries(key, appId);
    return list.length === count && list[0].attempts > 0 && list[0].error !== null ? list : null;
  }, { timeout: 15_000, message: `the attempt at ${label} journaled` });
  return latest;
}

describe("SSRF at input time, production mode: each path refuses the whole table with its catalogue error", { timeout: 60_000 }, () => {
  it("a manifest's webhook url (and a schedule's): webhook_invalid / schedule_invalid, no app made", async () => {
    const { key } = await owner();
    const before = await appCount(key);
    for (const [label, url] of HOSTILE) {
      const res = await callWith(PRODUCTION, "/v1/apps", { key, json: { html: "<p>x</p>", manifest: webhookManifest({ url }) } });
      const refused = await expectError(res, 400, "webhook_invalid");
      expect(refused.details, label).toMatchObject({ path: expect.stringContaining("url") });
    }
    for (const [label, url] of HOSTILE) {
      const schedules = { collections: { todos: { read: ["owner"], write: ["owner"], delete: ["owner"] } }, schedules: [{ collection: "todos", dateField: "due", url }] };
      const manifest = { "x-service-manifest": { app: { name: "SSRF schedules" }, ...schedules } };
      const refused = await expectError(await callWith(PRODUCTION, "/v1/apps", { key, json: { html: "<p>x</p>", manifest } }), 400, "schedule_invalid");
      expect(refused.details, label).toMatchObject({ path: expect.stringContaining("url") });
    }
    expect(await appCount(key)).toBe(before);
  });

  it("a connection's authorizeUrl, tokenEndpoint and allowedHost: connection_invalid naming the field, nothing stored", async () => {
    const { key } = await owner();
    const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest: webhookManifest({ url: "https://hooks.example.com/in" }) } }), 201);
    const path = `/v1/apps/${app.app_id}/connections`;
    const oauth = {
      name: "crm", kind: "oauth2", allowedHost: "api.example.com", authorizeUrl: "https://auth.example.com/authorize",
      tokenEndpoint: "https://auth.example.com/token", clientId: "client", clientSecret: "client-secret-0123456789",
    };
    for (const [label, url] of HOSTILE) {
      for (const field of ["authorizeUrl", "tokenEndpoint"]) {
        const refused = await expectError(await callWith(PRODUCTION, path, { key, json: { ...oauth, [field]: url } }), 400, "connection_invalid");
        expect(refused.details, `${label} as ${field}`).toMatchObject({ field });
      }
      const host = authorityOf(url);
      // An allowedHost has no scheme: the plain-http case's host is a public name, which it may be.
      if (label === "plain http") continue;
      const refused = await expectError(await callWith(PRODUCTION, path, { key, json: { name: "crm", allowedHost: host, headerValue: "Bearer k" } }), 400, "connection_invalid");
      expect(refused.details, `${label} as allowedHost ${host}`).toMatchObject({ field: "allowedHost" });
    }
    const listed = await json<{ connections: unknown[] }>(await callWith(PRODUCTION, path, { key }), 200);
    expect(listed.connections).toEqual([]);
  });

  it("a push subscription's endpoint: invalid_request naming endpoint, nothing saved", async () => {
    const { human } = await owner();
    const who = await browser();
    for (const [label, url] of HOSTILE) {
      const body = { endpoint: url, expirationTime: null, keys: who.target.keys };
      const refused = await expectError(await callWith(PRODUCTION, "/v1/self/push-subscriptions", { session: human.session, json: body }), 400, "invalid_request");
      expect(refused.details, label).toMatchObject({ field: "endpoint" });
    }
    const saved = await env.DB.prepare("SELECT count(*) AS n FROM push_subscriptions WHERE human_id = ?1").bind(human.humanId).first<number>("n");
    expect(saved).toBe(0);
  });

  it("an attachment fetch's source_url: attachment_fetch_failed, nothing stored, the loopback receiver never asked", async () => {
    const { key } = await owner();
    const name = inbox("attach");
    for (const [label, url] of [...HOSTILE, ["the loopback receiver", `${receiver}/hook/${name}`] as const]) {
      const refused = await expectError(await callWith(PRODUCTION, "/v1/attachments/fetch", { key, json: { source_url: url } }), 422, "attachment_fetch_failed");
      expect(refused.details, label).toMatchObject({ reason: expect.stringMatching(/^the target /), status: null });
    }
    expect(await receivedAt(name)).toEqual([]);
    const listed = await json<{ items: unknown[] }>(await call("/v1/attachments", { key }), 200);
    expect(listed.items).toEqual([]);
  });
});

describe("SSRF at use time, production mode: refused again when the request would go out", { timeout: 60_000 }, () => {
  it("a webhook delivery whose url comes from a setting: every case journaled as refused by the consumer, the receiver never hit", async () => {
    const { key } = await owner();
    const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest: webhookManifest({ urlFromSetting: "hookUrl" }) } }), 201);
    await holdEagerFlush(app.app_id);
    const name = inbox("hook");
    const targets = [...HOSTILE, ["the loopback receiver", `${receiver}/hook/${name}`] as const, ["localhost receiver", `${receiver.replace("127.0.0.1", "localhost")}/hook/${name}`] as const];
    let version = 0;
    for (const [i, [label, url]] of targets.entries()) {
      const settings = `/v1/apps/${app.app_id}/collections/settings`;
      version = i === 0
        ? (await json<{ row: { version: number } }>(await call(settings, { key, json: { key: "install-config", data: { hookUrl: url } } }), 201)).row.version
        : (await json<{ version: number }>(await call(`${settings}/install-config`, { key, method: "PATCH", json: { data: { hookUrl: url }, if_match: version } }), 200)).version;
      await json(await call(`/v1/apps/${app.app_id}/collections/notes`, { key, json: { data: { label } } }), 201);
      const latest = await deliverInProduction(key, app.app_id, i + 1, label);
      expect({ label, responseStatus: latest.responseStatus, error: latest.error }).toEqual({ label, responseStatus: null, error: expect.stringMatching(/^the target /) });
    }
    expect(await receivedAt(name)).toEqual([]);
  });

  it("a relative webhook url on a connection's captured instance base: refused by the guard or the allowedHost binding", async () => {
    const { key } = await owner();
    const rule = { url: "/services/data/v60/sobjects/Case", connection: "crm" };
    const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest: webhookManifest(rule) } }), 201);
    const connection = {
      name: "crm", kind: "oauth2", allowedHost: "*.example.com", authorizeUrl: "https://auth.example.com/authorize",
      tokenEndpoint: "https://auth.example.com/token", clientId: "client", clientSecret: "client-secret-0123456789", instanceField: "instance_url",
    };
    await json(await callWith(PRODUCTION, `/v1/apps/${app.app_id}/connections`, { key, json: connection }), 201);
    await holdEagerFlush(app.app_id);
    const bases: ReadonlyArray<readonly [string, string, RegExp]> = [
      ["userinfo on an allowed host", "https://user:pw@eu.example.com", /^the target has user info$/],
      ["plain http on an allowed host", "http://eu.example.com", /^the target must use https$/],
      ["the metadata address", "https://169.254.169.254", /is never sent to 169\.254\.169\.254$/],
      ["a local name", "https://crm.local", /is never sent to crm\.local$/],
      ["the loopback receiver", receiver, /is never sent to 127\.0\.0\.1$/],
    ];
    for (const [i, [label, base, refusal]] of bases.entries()) {
      const row = (await getConnection(env, app.app_id, "crm"))!;
      const production = { ...env, ...PRODUCTION } as Env;
      expect(await storeTokens(env, row.id, row.tokenGeneration, {
        status: "active", accessTokenSealed: await seal(production, sealedPlace(row.id, "access"), "instance-access-token"),
        refreshTokenSealed: null, expiresAt: new Date(Date.now() + 3_600_000).toISOString(), instanceBaseUrl: base,
      })).toBeDefined();
      await json(await call(`/v1/apps/${app.app_id}/collections/notes`, { key, json: { data: { label } } }), 201);
      const latest = await deliverInProduction(key, app.app_id, i + 1, label);
      expect({ label, responseStatus: latest.responseStatus, error: latest.error }).toEqual({ label, responseStatus: null, error: expect.stringMatching(refusal) });
    }
  });

  it("a push send through the default (guarded) sender: failed before anything is sent", async () => {
    const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]) as CryptoKeyPair;
    const production = { ...env, ...PRODUCTION, VAPID_PRIVATE_KEY: (await crypto.subtle.exportKey("jwk", pair.privateKey) as JsonWebKey).d } as Env;
    const name = inbox("push");
    for (const [label, url] of [...HOSTILE, ["the loopback receiver", `${receiver}/hook/${name}`] as const]) {
      const who = await browser(url);
      const outcome = await sendPush(production, who.target, { title: "t", body: "b", link: null });
      expect(outcome, label).toMatchObject({ kind: "failed", status: null });
    }
    expect(await receivedAt(name)).toEqual([]);
  });

  it("an oauth2 token request (the refresh a delivery makes, the code exchange's transport): refused, never sent", async () => {
    const name = inbox("token");
    for (const [label, url] of [...HOSTILE, ["the loopback receiver", `${receiver}/hook/${name}`] as const]) {
      const provider: OAuthProvider = {
        authorizeUrl: "https://auth.example.com/authorize", tokenEndpoint: url, clientId: "c", clientSecret: "s", scopes: null, authParams: {}, tokenParams: {},
      };
      const outcome = await refreshGrant(provider, "refresh-token", false);
      expect(outcome, label).toMatchObject({ kind: "failed" });
    }
    expect(await receivedAt(name)).toEqual([]);
  });
});

describe("redirects are never followed, on any path (development mode, loopback receiver)", { timeout: 60_000 }, () => {
  it("a webhook delivery: the 302 is a failed attempt, its Location never requested", async () => {
    const { key } = await owner();
    const moved = inbox("hook-moved");
    for (const location of redirectTargets(moved)) {
      const name = inbox("hook");
      await behave(name, { status: 302, location });
      const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest: webhookManifest({ url: `${receiver}/hook/${name}` }) } }), 201);
      await json(await call(`/v1/apps/${app.app_id}/collections/notes`, { key, json: { data: { location } } }), 201);
      const [first] = await waitFor(async () => {
        const list = await deliveries(key, app.app_id);
        return list[0]?.responseStatus === 302 ? list : null;
      }, { timeout: 15_000, message: `the 302 toward ${location} journaled` });
      expect(first.status).not.toBe("delivered");
      expect((await receivedAt(name)).length).toBeGreaterThan(0);
    }
    expect(await receivedAt(`${moved}-followed`)).toEqual([]);
  });

  it("an attachment fetch, a push send and a token request: the 302 fails each, the loopback Location never requested", async () => {
    const { key } = await owner();
    const name = inbox("moved");
    const [followed] = redirectTargets(name);
    const through = inbox("redirecting");
    await behave(through, { status: 302, location: followed });
    const source = `${receiver}/hook/${through}`;

    const attachment = await expectError(await call("/v1/attachments/fetch", { key, json: { source_url: source } }), 422, "attachment_fetch_failed");
    expect(attachment.details).toMatchObject({ status: 302 });

    const who = await browser(source);
    expect(await sendPush(env, who.target, { title: "t", body: "b", link: null })).toMatchObject({ kind: "failed", status: 302 });

    const provider: OAuthProvider = { authorizeUrl: "http://127.0.0.1:9/authorize", tokenEndpoint: source, clientId: "c", clientSecret: "s", scopes: null, authParams: {}, tokenParams: {} };
    expect(await refreshGrant(provider, "refresh-token", true)).toMatchObject({ kind: "failed" });

    expect((await receivedAt(through)).map((request) => request.method)).toEqual(["GET", "POST", "POST"]);
    expect(await receivedAt(`${name}-followed`)).toEqual([]);
  });
});

describe("DNS answers are checked at every send (the guard's resolver hook), production mode", () => {
  const post: OutboundRequest = { method: "POST", headers: {}, body: "{}", timeoutMs: 2_000, maxResponseBytes: 1_024 };

  it("an answer that turns private between two sends is refused on the second, which sends nothing", async () => {
    const answers = [["93.184.215.14"], ["10.0.0.7"], ["93.184.215.14", "::ffff:169.254.169.254"], ["64:ff9b::a9fe:a9fe"], ["fd00::1"]];
    const asked: string[] = [];
    const sent: string[] = [];
    let turn = 0;
    const resolve = async (host: string) => {
      asked.push(host);
      return answers[turn++];
    };
    const fetcher = (async (url: string) => {
      sent.push(url);
      return new Response("ok");
    }) as typeof fetch;
    const results = [];
    for (let i = 0; i < answers.length; i += 1) results.push(await outboundFetch("https://rebind.example.com/in", post, { development: false, resolve, fetcher }));
    expect(results.map((result) => result.error)).toEqual([null, ...new Array(4).fill("the target resolves to a non-routable address")]);
    expect(asked).toEqual(new Array(5).fill("rebind.example.com"));
    // Only the first send went out, and by name: the connection itself is not pinned to the checked address (docs/security.md).
    expect(sent).toEqual(["https://rebind.example.com/in"]);
  });
});
