// Relative webhook urls (WIRE §6.1 last row): a rule whose `connection` names an oauth2
// connection with `instanceField` may give a path, resolved when the rule fires against
// the instance base the connection captured. Before the owner authorized it the delivery
// is journaled failed with the reason (the write itself succeeds); once it is active the
// receiver on 127.0.0.1 gets the request at the instance's path with the connection's
// token; an instance base the outbound guard refuses is refused like any target. The
// compiler takes a relative url only beside a connection, and only a plain path.
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { call, json } from "../helpers";
import { waitFor } from "../../support/wait";
import type { ReceivedRequest } from "../../support/webhook-receiver-types";
import { owner } from "../serve/helpers";
import { getConnection, storeTokens } from "../../../src/db/connections";
import { seal, sealedPlace } from "../../../src/connections/sealing";
import { oauthBody } from "./fixtures";

const receiver = inject("webhookReceiver");

interface Delivery { status: string; url: string; error: string | null }

function manifest(url: string, connection?: string) {
  return {
    "x-service-manifest": {
      app: { name: "Instance hooks" },
      collections: { cases: { read: ["owner"], write: ["owner"], delete: ["owner"] } },
      webhooks: [{ on: "create", collection: "cases", url, ...(connection ? { connection } : {}) }],
    },
  };
}

async function instanceApp(path: string) {
  const who = await owner();
  const key = who.agent.api_key;
  const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest: manifest(path, "crm") } }), 201);
  const base = `/v1/apps/${app.app_id}`;
  await json(await call(`${base}/connections`, { key, json: oauthBody({ name: "crm", allowedHost: "127.0.0.1", instanceField: "instance_url" }) }), 201);
  return {
    appId: app.app_id,
    write: () => call(`${base}/collections/cases`, { key, json: { data: { subject: "Broken printer" } } }),
    deliveries: async () => (await json<{ deliveries: Delivery[] }>(await call(`${base}/webhooks/deliveries`, { key }), 200)).deliveries,
  };
}

/** The owner's consent as the callback stores it: active, a sealed access token, the captured instance base. */
async function authorized(appId: string, instanceBaseUrl: string): Promise<void> {
  const row = (await getConnection(env, appId, "crm"))!;
  expect(await storeTokens(env, row.id, row.tokenGeneration, {
    status: "active", accessTokenSealed: await seal(env, sealedPlace(row.id, "access"), "instance-access-token"),
    refreshTokenSealed: null, expiresAt: new Date(Date.now() + 3600_000).toISOString(), instanceBaseUrl,
  })).toBeDefined();
}

/** The app's newest delivery once it carries an error. */
function refusal(app: { deliveries(): Promise<Delivery[]> }, message: string): Promise<Delivery> {
  return waitFor(async () => {
    const [newest] = await app.deliveries();
    return newest?.error ? newest : null;
  }, { timeout: 30_000, interval: 100, message });
}

async function log(inbox: string): Promise<ReceivedRequest[]> {
  return (await (await fetch(`${receiver}/log/${inbox}`)).json()) as ReceivedRequest[];
}

describe("a relative webhook url on an oauth2 connection's instance", { timeout: 60_000 }, () => {
  it("fails in the journal until the connection has an instance base, then goes to the instance with the token", async () => {
    const inbox = `instance-${crypto.randomUUID().slice(0, 8)}`;
    const path = `/hook/${inbox}/services/data/v60/sobjects/Case`;
    const app = await instanceApp(path);

    await json(await app.write(), 201);
    const [waiting] = await waitFor(async () => {
      const list = await app.deliveries();
      return list[0]?.status === "failed" ? list : null;
    }, { timeout: 30_000, interval: 100, message: "the unresolvable delivery journaled as failed" });
    expect(waiting.error).toContain('connection "crm" has no instance base URL yet');
    expect(waiting.url).toBe(path);

    await authorized(app.appId, receiver);
    await json(await app.write(), 201);
    const [request] = await waitFor(async () => {
      const got = await log(inbox);
      return got.length > 0 ? got : null;
    }, { timeout: 30_000, interval: 100, message: "the delivery at the instance" });
    expect(request.path).toBe(path);
    expect(request.headers.authorization).toBe("Bearer instance-access-token");
    const delivered = await waitFor(async () => (await app.deliveries()).find((d) => d.status === "delivered"), { timeout: 10_000, interval: 100, message: "delivered" });
    expect(delivered.url).toBe(`${new URL(receiver).host}${path}`);
  });

  it("refuses an instance base the outbound guard refuses, and one off the connection's allowed host", async () => {
    const metadata = await instanceApp("/latest/meta-data");
    await authorized(metadata.appId, "https://169.254.169.254");
    await json(await metadata.write(), 201);
    const refused = await refusal(metadata, "the refused attempt in the journal");
    expect(refused.url).toBe("169.254.169.254/latest/meta-data");
    expect(refused.error).toMatch(/non-routable|refused|not allowed|169\.254/);

    const elsewhere = await instanceApp("/services/data");
    await authorized(elsewhere.appId, "https://api.example.com");
    await json(await elsewhere.write(), 201);
    const offHost = await refusal(elsewhere, "the off-host refusal in the journal");
    expect(offHost.error).toBe('connection "crm" is bound to 127.0.0.1 and is never sent to api.example.com');
  });

  it("is refused at deploy without a connection, and when it is not a plain path", async () => {
    const who = await owner();
    const deploy = (url: string, connection?: string) => call("/v1/apps", { key: who.agent.api_key, json: { html: "<p>x</p>", manifest: manifest(url, connection) } });
    for (const [url, connection] of [["/services/data", undefined], ["//evil.example/x", "crm"], ["/a\\b", "crm"], ["/a b", "crm"]] as const) {
      const res = await deploy(url, connection);
      const body = await json<{ error: { code: string; details: { path: string } } }>(res, 400);
      expect(body.error.code, url).toBe("webhook_invalid");
      expect(body.error.details.path).toBe("x-service-manifest.webhooks[0].url");
    }
  });
});
