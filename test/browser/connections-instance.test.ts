// A relative webhook url on an oauth2 connection's instance, the whole way in Chromium
// against a real local relay: a rule posts each new case to `/services/data/v60/sobjects/
// Case` through the oauth2 connection `crm` (instanceField `instance_url`). Before the
// owner's consent a write is journaled as a failed delivery saying the connection has no
// instance base yet; the owner then consents at the fake provider (fake-oauth-provider.ts),
// whose token answer names an instance on 127.0.0.1; the next write reaches that
// instance at the rule's path with the connection's access token and the relay's
// signature. Every request stays on loopback.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait";
import { api, ownerWithAgent, relayUrl, signInHere, useBrowser } from "./support";
import { startFakeProvider, type FakeProvider } from "./fake-oauth-provider";

const { newPage } = useBrowser();

const CLIENT_ID = "relay-instance-client";
const CLIENT_SECRET = "fake-provider-instance-secret-0123456789";
const PATH = "/services/data/v60/sobjects/Case";

type Hit = { path: string; headers: IncomingHttpHeaders; body: string };
const hits: Hit[] = [];
const instance = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    hits.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
    res.writeHead(201, { "content-type": "application/json" }).end('{"id":"500xx"}');
  });
});
let provider: FakeProvider;

beforeAll(async () => {
  await new Promise<void>((resolve) => instance.listen(0, "127.0.0.1", resolve));
  const instanceUrl = `http://127.0.0.1:${(instance.address() as AddressInfo).port}`;
  provider = await startFakeProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, expiresIn: 3600, instanceUrl });
});

afterAll(async () => {
  await provider?.close();
  await new Promise<void>((resolve) => {
    instance.closeAllConnections();
    instance.close(() => resolve());
  });
});

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  "x-service-manifest": {
    app: { name: "Support desk" },
    collections: { cases: { read: ["owner"], write: ["owner"], delete: ["owner"] } },
    webhooks: [{ on: "create", collection: "cases", url: PATH, connection: "crm" }],
  },
};

interface Delivery { status: string; url: string; error: string | null }

describe("a relative webhook url through an oauth2 connection's instance", { timeout: 60_000 }, () => {
  it("is journaled failed before consent, then reaches the instance the provider named, with the token", async () => {
    const { email, key } = await ownerWithAgent("instance-owner");
    const deployed = await api<{ app_id: string }>("/v1/apps", { key, body: { html: "<!doctype html><title>Desk</title>", manifest: MANIFEST, visibility: "private" } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
    const appId = deployed.body.app_id;
    const created = await api(`/v1/apps/${appId}/connections`, {
      key,
      body: {
        name: "crm", kind: "oauth2", allowedHost: "127.0.0.1", authorizeUrl: `${provider.origin}/authorize`,
        tokenEndpoint: `${provider.origin}/token`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: "calendar.read", instanceField: "instance_url",
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const deliveries = async () => (await api<{ deliveries: Delivery[] }>(`/v1/apps/${appId}/webhooks/deliveries`, { key })).body.deliveries;
    const write = async (subject: string) => expect((await api(`/v1/apps/${appId}/collections/cases`, { key, body: { data: { subject } } })).status).toBe(201);

    await write("Before consent");
    const [early] = await waitFor(async () => {
      const list = await deliveries();
      return list[0]?.status === "failed" ? list : null;
    }, { timeout: 20_000, interval: 100, message: "the delivery before consent journaled as failed" });
    expect(early.error).toContain('connection "crm" has no instance base URL yet');
    expect(early.url).toBe(PATH);

    const p = await newPage([provider.origin]);
    await p.goto(`${relayUrl}/v1/apps/${appId}/connections/crm/authorize`);
    await signInHere(p, email);
    await p.locator("#allow").click();
    await p.locator("#consent-outcome", { hasText: "Connected" }).waitFor();

    await write("After consent");
    const hit = await waitFor(() => hits[0], { timeout: 20_000, interval: 100, message: "the delivery at the instance" });
    expect(hit.path).toBe(PATH);
    expect(hit.headers.authorization).toMatch(/^Bearer \S+$/);
    expect(hit.headers["x-service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(JSON.parse(hit.body)).toMatchObject({ app_id: appId, collection: "cases", op: "create", row: { data: { subject: "After consent" } } });
    const delivered = await waitFor(async () => (await deliveries()).find((d) => d.status === "delivered"), { timeout: 10_000, interval: 100, message: "journaled delivered" });
    expect(delivered.url).toBe(`127.0.0.1:${(instance.address() as AddressInfo).port}${PATH}`);
  });
});
