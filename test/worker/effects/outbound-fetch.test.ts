// The outbound fetch inside workerd: the guard's order (URL, then the host resolved at send
// time, then the request), the deadline over each stage, the body cap and its
// cancellation, and the DNS-over-HTTPS resolver's reading of answers. A workerd test cannot
// start a server, so the request side is a fetch stand-in here except for one real
// connection to a closed loopback port; the exchanges with a real receiver (redirects,
// a receiver that never answers, Retry-After on the wire) are in
// test/reliability/outbound-fetch.test.ts. Nothing here contacts a non-loopback address.
import { describe, expect, it } from "vitest";
import { dnsOverHttpsResolver, outboundFetch, parseRetryAfter, type OutboundRequest, type Resolver } from "../../../src/effects/outbound-fetch";

const post: OutboundRequest = { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":1}', timeoutMs: 2_000, maxResponseBytes: 1_024 };

/** A fetch stand-in that records each call and answers with `answer`. */
function recordingFetcher(answer: (url: string, init: RequestInit) => Promise<Response> = async () => new Response("ok")) {
  const calls: Array<{ url: string; init: RequestInit }> = [];
  const fetcher = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    calls.push({ url, init: init ?? {} });
    return answer(url, init ?? {});
  }) as typeof fetch;
  return { fetcher, calls };
}

/** A fetch stand-in that never answers and rejects once its signal aborts, as fetch does. */
function neverAnswering() {
  return recordingFetcher((_url, init) => new Promise<Response>((_resolve, reject) => {
    init.signal?.addEventListener("abort", () => reject(init.signal?.reason));
  }));
}

/** A resolver that answers fixed addresses and records which hosts it was asked. */
function fixedResolver(addresses: string[]) {
  const asked: string[] = [];
  const resolve: Resolver = async (host) => {
    asked.push(host);
    return addresses;
  };
  return { resolve, asked };
}

/** A body that streams `chunks` on demand and records whether the reader cancelled it. */
function chunkedBody(chunks: Uint8Array[]) {
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[state.pulled++];
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe("outboundFetch: the guard before any request", () => {
  it("refuses a URL the policy refuses without resolving or fetching", async () => {
    const { fetcher, calls } = recordingFetcher();
    const { resolve, asked } = fixedResolver(["93.184.215.14"]);
    for (const url of ["http://127.0.0.1:9/hook", "https://10.0.0.1/", "https://metadata.google.internal/", "https://u:p@example.com/"]) {
      const result = await outboundFetch(url, post, { development: false, resolve, fetcher });
      expect(result).toMatchObject({ status: null, headers: null, body: "", bodyTruncated: false, retryAfterSeconds: null });
      expect(result.error).toMatch(/^the target /);
    }
    expect(asked).toEqual([]);
    expect(calls).toEqual([]);
  });

  it("refuses a host that resolves to any non-routable address, and never sends", async () => {
    const { fetcher, calls } = recordingFetcher();
    for (const addresses of [["10.0.0.1"], ["93.184.215.14", "127.0.0.1"], ["2606:4700::1", "::ffff:169.254.169.254"], ["fd00:ec2::254"]]) {
      const result = await outboundFetch("https://hooks.example.com/in", post, { development: false, resolve: fixedResolver(addresses).resolve, fetcher });
      expect(result.error).toBe("the target resolves to a non-routable address");
      expect(result.status).toBeNull();
    }
    expect(calls).toEqual([]);
  });

  it("sends to a host whose addresses are all public, once, without following redirects and under a deadline", async () => {
    const { fetcher, calls } = recordingFetcher(async () => new Response("accepted", { status: 202, headers: { "x-receiver": "yes" } }));
    const { resolve, asked } = fixedResolver(["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]);
    const result = await outboundFetch("https://hooks.example.com./in?x=1", post, { development: false, resolve, fetcher });
    expect(result).toMatchObject({ status: 202, body: "accepted", bodyTruncated: false, error: null, retryAfterSeconds: null });
    expect(result.headers?.get("x-receiver")).toBe("yes");
    expect(asked).toEqual(["hooks.example.com"]);
    expect(calls).toHaveLength(1);
    expect(calls[0].url).toBe("https://hooks.example.com./in?x=1");
    expect(calls[0].init).toMatchObject({ method: "POST", body: '{"a":1}', redirect: "manual", headers: { "content-type": "application/json" } });
    expect(calls[0].init.signal).toBeInstanceOf(AbortSignal);
  });

  it("resolves public hosts in development too, and only skips resolving for the loopback targets", async () => {
    const { fetcher, calls } = recordingFetcher();
    const { resolve, asked } = fixedResolver(["192.168.0.10"]);
    const result = await outboundFetch("https://hooks.example.com/in", post, { development: true, resolve, fetcher });
    expect(result.error).toBe("the target resolves to a non-routable address");
    expect(asked).toEqual(["hooks.example.com"]);
    for (const url of ["http://127.0.0.1:9/a", "http://localhost:9/b", "http://[::1]:9/c"]) {
      expect(await outboundFetch(url, post, { development: true, resolve, fetcher })).toMatchObject({ status: 200, error: null });
    }
    expect(asked).toEqual(["hooks.example.com"]);
    expect(calls.map((call) => call.url)).toEqual(["http://127.0.0.1:9/a", "http://localhost:9/b", "http://[::1]:9/c"]);
  });

  it("reports a host that cannot be resolved, or has no address, without sending", async () => {
    const { fetcher, calls } = recordingFetcher();
    const failing: Resolver = async (host) => {
      throw new Error(`${host} does not exist`);
    };
    expect((await outboundFetch("https://gone.example.com/", post, { development: false, resolve: failing, fetcher })).error)
      .toBe("the target's host could not be resolved: gone.example.com does not exist");
    expect((await outboundFetch("https://empty.example.com/", post, { development: false, resolve: fixedResolver([]).resolve, fetcher })).error)
      .toBe("the target's host could not be resolved: no address");
    expect(calls).toEqual([]);
  });
});

describe("outboundFetch: bounded in time", () => {
  it("times out while resolving", async () => {
    const { fetcher, calls } = recordingFetcher();
    const never: Resolver = () => new Promise<string[]>(() => undefined);
    const result = await outboundFetch("https://slow-dns.example.com/", { ...post, timeoutMs: 200 }, { development: false, resolve: never, fetcher });
    expect(result).toMatchObject({ status: null, error: "timed out after 200 ms" });
    expect(result.durationMs).toBeLessThan(2_000);
    expect(calls).toEqual([]);
  });

  it("times out waiting for a response, through the signal handed to fetch", async () => {
    const { fetcher } = neverAnswering();
    const result = await outboundFetch("http://127.0.0.1:9/hang", { ...post, timeoutMs: 200 }, { development: true, fetcher });
    expect(result).toMatchObject({ status: null, headers: null, error: "timed out after 200 ms" });
    expect(result.durationMs).toBeLessThan(2_000);
  });

  it("keeps what arrived of a body that stops arriving, flagged truncated, once the deadline passes", async () => {
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes("partial"));
      },
    });
    const { fetcher } = recordingFetcher(async () => new Response(stalled, { status: 200 }));
    const result = await outboundFetch("http://localhost:9/stall", { ...post, timeoutMs: 200 }, { development: true, fetcher });
    expect(result).toMatchObject({ status: 200, body: "partial", bodyTruncated: true, error: null });
  });

  it("reports a refused connection to a real closed loopback port as a failure without a response", async () => {
    const result = await outboundFetch("http://127.0.0.1:9/hook", post, { development: true });
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/^the request failed: /);
    expect(result.durationMs).toBeLessThan(post.timeoutMs);
  });
});

describe("outboundFetch: bounded in size", () => {
  it("reads up to the cap, cuts there, flags it and cancels the rest of the stream", async () => {
    const { stream, state } = chunkedBody([bytes("a".repeat(600)), bytes("b".repeat(600)), ...new Array(30).fill(bytes("c".repeat(600)))]);
    const { fetcher } = recordingFetcher(async () => new Response(stream));
    const result = await outboundFetch("http://127.0.0.1:9/big", post, { development: true, fetcher });
    expect(result).toMatchObject({ status: 200, bodyTruncated: true, error: null });
    expect(result.body).toBe("a".repeat(600) + "b".repeat(424));
    expect(state.cancelled).toBe(true);
    expect(state.pulled).toBeLessThan(32);
  });

  it("keeps a body of exactly the cap whole, and drops a character the cap cuts in half", async () => {
    const { fetcher: exact } = recordingFetcher(async () => new Response(chunkedBody([bytes("x".repeat(512)), bytes("y".repeat(512))]).stream));
    expect(await outboundFetch("http://127.0.0.1:9/exact", post, { development: true, fetcher: exact }))
      .toMatchObject({ body: "x".repeat(512) + "y".repeat(512), bodyTruncated: false });

    // "é" is two bytes; the cap falls between them.
    const { fetcher: split } = recordingFetcher(async () => new Response(bytes(`${"z".repeat(1_023)}é and more`)));
    expect(await outboundFetch("http://127.0.0.1:9/split", post, { development: true, fetcher: split }))
      .toMatchObject({ body: "z".repeat(1_023), bodyTruncated: true });
  });

  it("decodes invalid UTF-8 lossily and reads an empty or absent body as empty", async () => {
    const { fetcher: invalid } = recordingFetcher(async () => new Response(new Uint8Array([0x6f, 0x6b, 0xff, 0x21])));
    expect((await outboundFetch("http://127.0.0.1:9/bad", post, { development: true, fetcher: invalid })).body).toBe("ok\ufffd!");
    const { fetcher: empty } = recordingFetcher(async () => new Response(null, { status: 204 }));
    expect(await outboundFetch("http://127.0.0.1:9/none", post, { development: true, fetcher: empty }))
      .toMatchObject({ status: 204, body: "", bodyTruncated: false, error: null });
  });
});

describe("outboundFetch: never throws", () => {
  it("turns nonsense bounds (a timeout that is no bound times out at once) and a request fetch refuses into results", async () => {
    const { fetcher: hanging } = neverAnswering();
    for (const timeoutMs of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect((await outboundFetch("http://127.0.0.1:9/a", { ...post, timeoutMs }, { development: true, fetcher: hanging })).error).toBe("timed out after 0 ms");
    }
    const { fetcher } = recordingFetcher(async () => new Response("body"));
    expect(await outboundFetch("http://127.0.0.1:9/b", { ...post, maxResponseBytes: -5 }, { development: true, fetcher }))
      .toMatchObject({ status: 200, body: "", bodyTruncated: true });
    const getWithBody = await outboundFetch("http://127.0.0.1:9/c", { ...post, method: "GET" }, { development: true });
    expect(getWithBody).toMatchObject({ status: null, headers: null });
    expect(getWithBody.error).toMatch(/^the request failed: /);
  });
});

describe("outboundFetch: Retry-After", () => {
  it("is read from 429 and 503 answers only", async () => {
    for (const [status, expected] of [[429, 120], [503, 120], [500, null], [200, null]] as const) {
      const { fetcher } = recordingFetcher(async () => new Response("busy", { status, headers: { "retry-after": "120" } }));
      expect((await outboundFetch("http://127.0.0.1:9/busy", post, { development: true, fetcher })).retryAfterSeconds).toBe(expected);
    }
  });

  it("parses delta-seconds and the HTTP-date forms, and nothing else", () => {
    const now = Date.parse("2026-11-27T08:00:00Z");
    expect(parseRetryAfter("0", now)).toBe(0);
    expect(parseRetryAfter(" 3600 ", now)).toBe(3600);
    expect(parseRetryAfter("Fri, 27 Nov 2026 08:01:30 GMT", now)).toBe(90);
    expect(parseRetryAfter("Friday, 27-Nov-26 08:00:10 GMT", now)).toBe(10);
    expect(parseRetryAfter("Fri Nov 27 08:00:05 2026", now)).toBe(5);
    expect(parseRetryAfter("Thu, 26 Nov 2026 08:00:00 GMT", now)).toBe(0);
    for (const unreadable of [null, "", "soon", "-5", "1.5", "5.5", "2026-11-27", "Fri, 99 Nov 2026 08:00:00 GMT"]) {
      expect(parseRetryAfter(unreadable, now)).toBeNull();
    }
  });
});

describe("dnsOverHttpsResolver", () => {
  /** A stand-in for the DoH endpoint that answers each record type from `records`. */
  function dohStandIn(records: Record<"A" | "AAAA", unknown>) {
    return recordingFetcher(async (url) => {
      const type = new URL(url).searchParams.get("type") as "A" | "AAAA";
      return Response.json(records[type], { headers: { "content-type": "application/dns-json" } });
    });
  }

  it("asks for A and AAAA records and returns both, skipping the CNAME chain", async () => {
    const { fetcher, calls } = dohStandIn({
      A: { Status: 0, Answer: [{ name: "www.example.com", type: 5, TTL: 60, data: "edge.example.net." }, { name: "edge.example.net", type: 1, TTL: 60, data: "93.184.215.14" }] },
      AAAA: { Status: 0, Answer: [{ name: "edge.example.net", type: 28, TTL: 60, data: "2606:2800:21f:cb07:6820:80da:af6b:8b2c" }] },
    });
    expect(await dnsOverHttpsResolver(fetcher)("www.example.com")).toEqual(["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]);
    expect(calls.map((call) => call.url).sort()).toEqual([
      "https://cloudflare-dns.com/dns-query?name=www.example.com&type=A",
      "https://cloudflare-dns.com/dns-query?name=www.example.com&type=AAAA",
    ]);
    for (const call of calls) expect(call.init.headers).toEqual({ accept: "application/dns-json" });
  });

  it("returns the addresses of one family when the other has none", async () => {
    const { fetcher } = dohStandIn({ A: { Status: 0 }, AAAA: { Status: 0, Answer: [{ type: 28, data: "2001:4860:4860::8888" }] } });
    expect(await dnsOverHttpsResolver(fetcher)("v6only.example.com")).toEqual(["2001:4860:4860::8888"]);
  });

  it("throws on a name that does not exist, a name without addresses and an answer it cannot read", async () => {
    const nxdomain = dohStandIn({ A: { Status: 3 }, AAAA: { Status: 3 } });
    await expect(dnsOverHttpsResolver(nxdomain.fetcher)("nope.example.com")).rejects.toThrow("DNS answered rcode 3 for nope.example.com");
    const noAddress = dohStandIn({ A: { Status: 0, Answer: [] }, AAAA: { Status: 0 } });
    await expect(dnsOverHttpsResolver(noAddress.fetcher)("bare.example.com")).rejects.toThrow("bare.example.com has no A or AAAA record");
    const garbled = dohStandIn({ A: { answer: "?" }, AAAA: "not json either" });
    await expect(dnsOverHttpsResolver(garbled.fetcher)("odd.example.com")).rejects.toThrow();
    const { fetcher: unavailable } = recordingFetcher(async () => new Response("down", { status: 502 }));
    await expect(dnsOverHttpsResolver(unavailable)("any.example.com")).rejects.toThrow("DNS over HTTPS answered 502");
  });

  it("is what outboundFetch refuses through when an answer is private", async () => {
    const doh = dohStandIn({ A: { Status: 0, Answer: [{ type: 1, data: "169.254.169.254" }] }, AAAA: { Status: 0 } });
    const { fetcher, calls } = recordingFetcher();
    const result = await outboundFetch("https://rebind.example.com/", post, { development: false, resolve: dnsOverHttpsResolver(doh.fetcher), fetcher });
    expect(result.error).toBe("the target resolves to a non-routable address");
    expect(doh.calls).toHaveLength(2);
    expect(calls).toEqual([]);
  });
});
