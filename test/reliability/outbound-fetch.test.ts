// The outbound fetch against a real receiver on 127.0.0.1: what only a real connection
// shows. A test inside workerd cannot start a server, so this one runs in Node and calls
// `outboundFetch` directly (it needs nothing but fetch); the guard's order, the body cap's
// edges and the DNS-over-HTTPS resolver are covered inside workerd by
// test/worker/effects/outbound-fetch.test.ts. Covered here: a 2xx body capped with the
// rest of the stream abandoned, a 302 returned and never followed, a receiver that never
// answers, a closed port, Retry-After in both forms, the production policy refusing the
// loopback receiver before any request, and a resolver's answer deciding whether a
// request goes out. Only loopback is ever contacted: the one "public" host is sent to
// the receiver by a fetch stand-in.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { outboundFetch, type OutboundRequest, type Resolver } from "../../src/effects/outbound-fetch.ts";
import { waitFor } from "../support/wait.ts";

interface Delivery {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** What the receiver saw: each request, and the paths whose client left before the body ended. */
const seen: Delivery[] = [];
const abandoned: string[] = [];
const BIG_BODY_BYTES = 4 * 1024 * 1024;
const RETRY_DATE_AHEAD_MS = 120_000;

let server: Server;
let receiverUrl = "";

/** Streams `total` bytes of "x" in 16 KiB writes, noting when the client goes away first. */
function streamLargeBody(res: ServerResponse, path: string, total: number): void {
  const chunk = Buffer.alloc(16 * 1024, "x");
  let sent = 0;
  res.on("close", () => {
    if (!res.writableFinished) abandoned.push(path);
  });
  res.writeHead(200, { "content-type": "text/plain" });
  const writeMore = () => {
    while (sent < total && !res.destroyed) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once("drain", writeMore);
    }
    if (!res.destroyed) res.end();
  };
  writeMore();
}

function answer(req: IncomingMessage, res: ServerResponse, path: string): void {
  switch (path) {
    case "/small":
      return void res.writeHead(200, { "content-type": "text/plain", "x-receiver": "local" }).end("thanks");
    case "/big":
      return streamLargeBody(res, path, BIG_BODY_BYTES);
    case "/redirect":
      return void res.writeHead(302, { location: `${receiverUrl}/landing` }).end();
    case "/hang":
      return; // never answers; the socket is closed when the server shuts down
    case "/throttled-seconds":
      return void res.writeHead(429, { "retry-after": "7" }).end("slow down");
    case "/throttled-date":
      return void res.writeHead(503, { "retry-after": new Date(Date.now() + RETRY_DATE_AHEAD_MS).toUTCString() }).end("busy");
    default:
      return void res.writeHead(404).end(`no ${req.url}`);
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://receiver").pathname;
      seen.push({ method: req.method ?? "", path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      answer(req, res, path);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  seen.length = 0;
  abandoned.length = 0;
});

const request = (overrides: Partial<OutboundRequest> = {}): OutboundRequest => ({
  method: "POST", headers: { "content-type": "application/json", "x-signature": "t=1,v1=ab" }, body: '{"event":"created"}', timeoutMs: 5_000, maxResponseBytes: 1_000, ...overrides,
});
const development = { development: true };

/** A port nothing listens on: one the system just handed out and took back. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("outboundFetch against a local receiver", () => {
  it("delivers the method, headers and body and returns the answer", async () => {
    const result = await outboundFetch(`${receiverUrl}/small`, request(), development);
    expect(result).toMatchObject({ status: 200, body: "thanks", bodyTruncated: false, error: null, retryAfterSeconds: null });
    expect(result.headers?.get("x-receiver")).toBe("local");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: "POST", path: "/small", body: '{"event":"created"}' });
    expect(seen[0].headers).toMatchObject({ "content-type": "application/json", "x-signature": "t=1,v1=ab" });
  });

  it("caps a large body, flags it truncated and abandons the rest of the stream", async () => {
    const result = await outboundFetch(`${receiverUrl}/big`, request({ method: "GET", body: undefined, maxResponseBytes: 1_000 }), development);
    expect(result).toMatchObject({ status: 200, bodyTruncated: true, error: null });
    expect(result.body).toBe("x".repeat(1_000));
    await waitFor(() => abandoned.includes("/big"), { message: "the receiver saw the client leave before the 4 MiB body ended" });
  });

  it("returns a 302 as it is and never follows it", async () => {
    const result = await outboundFetch(`${receiverUrl}/redirect`, request(), development);
    expect(result).toMatchObject({ status: 302, error: null, bodyTruncated: false });
    expect(result.headers?.get("location")).toBe(`${receiverUrl}/landing`);
    expect(seen.map((delivery) => delivery.path)).toEqual(["/redirect"]);
  });

  it("gives up on a receiver that never answers once the deadline passes", async () => {
    const result = await outboundFetch(`${receiverUrl}/hang`, request({ timeoutMs: 300 }), development);
    expect(result).toMatchObject({ status: null, headers: null, body: "", error: "timed out after 300 ms" });
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
    expect(result.durationMs).toBeLessThan(3_000);
    expect(seen.map((delivery) => delivery.path)).toEqual(["/hang"]);
  });

  it("reports a refused connection as a failure without a response", async () => {
    const result = await outboundFetch(`http://127.0.0.1:${await closedPort()}/hook`, request(), development);
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/^the request failed: /);
  });

  it("reads Retry-After as seconds and as an HTTP date", async () => {
    const seconds = await outboundFetch(`${receiverUrl}/throttled-seconds`, request(), development);
    expect(seconds).toMatchObject({ status: 429, body: "slow down", retryAfterSeconds: 7, error: null });
    const date = await outboundFetch(`${receiverUrl}/throttled-date`, request(), development);
    expect(date).toMatchObject({ status: 503, body: "busy", error: null });
    // An HTTP date has whole seconds, and a little time passes between answer and reading.
    expect(date.retryAfterSeconds).toBeGreaterThanOrEqual(RETRY_DATE_AHEAD_MS / 1000 - 5);
    expect(date.retryAfterSeconds).toBeLessThanOrEqual(RETRY_DATE_AHEAD_MS / 1000);
  });

  it("refuses the loopback receiver in production before any request reaches it", async () => {
    const { port } = new URL(receiverUrl);
    expect((await outboundFetch(`${receiverUrl}/small`, request(), { development: false })).error).toBe("the target is an IP literal");
    expect((await outboundFetch(`http://localhost:${port}/small`, request(), { development: false })).error).toBe("the target is a non-routable host");
    expect((await outboundFetch(`https://127.0.0.1:${port}/small`, request(), { development: false })).error).toBe("the target is an IP literal");
    expect(seen).toEqual([]);
  });
});

describe("outboundFetch with a resolver's answer", () => {
  /** Sends whatever it is asked for to the local receiver instead, keeping path and init. */
  const sentTo: string[] = [];
  const toReceiver = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    sentTo.push(url.href);
    return fetch(`${receiverUrl}${url.pathname}`, init);
  }) as typeof fetch;
  const answering = (addresses: string[]): Resolver => async () => addresses;

  beforeEach(() => {
    sentTo.length = 0;
  });

  it("refuses a host that resolves to a private address, and sends nothing", async () => {
    for (const addresses of [["10.1.2.3"], ["203.0.113.7"], ["2606:4700::6810:84e5", "fe80::1"]]) {
      const result = await outboundFetch("https://hooks.example.com/small", request(), { development: false, resolve: answering(addresses), fetcher: toReceiver });
      expect(result).toMatchObject({ status: null, error: "the target resolves to a non-routable address" });
    }
    expect(sentTo).toEqual([]);
    expect(seen).toEqual([]);
  });

  it("sends when every address is public", async () => {
    const result = await outboundFetch("https://hooks.example.com/small", request(), { development: false, resolve: answering(["93.184.215.14", "2606:4700::6810:84e5"]), fetcher: toReceiver });
    expect(result).toMatchObject({ status: 200, body: "thanks", error: null });
    expect(sentTo).toEqual(["https://hooks.example.com/small"]);
    expect(seen.map((delivery) => delivery.path)).toEqual(["/small"]);
  });
});
