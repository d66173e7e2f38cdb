// `npm run bench` section (e): write → signed webhook received, beside a bare baseline.
// A receiver on 127.0.0.1 records when each delivery arrives (the row carries a mark) and
// checks its signature. The relay side: an app whose manifest posts every create to the
// receiver; N creates at 1, 10 and 100 concurrent writers, each timed from the moment the
// write was sent to the moment its signed delivery arrived. The baseline: a bare Worker
// that enqueues the body to a Queue and a consumer that POSTs it to the receiver (no
// outbox, no journal, no signature), driven the same way. Printed, never asserted.
import { createHmac } from "node:crypto";
import http from "node:http";

/** A loopback receiver: resolves each awaited mark when a POST carrying it arrives. */
export async function startHookReceiver() {
  const arrivals = new Map();
  const waiting = new Map();
  let badSignatures = 0;
  let secret = null;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      res.writeHead(200).end("ok");
      let mark;
      try {
        const parsed = JSON.parse(body);
        mark = parsed?.row?.data?.title ?? parsed?.title;
      } catch { return; }
      if (secret && req.url.startsWith("/relay")) {
        const header = String(req.headers["x-service-signature"] ?? "");
        const t = /t=(\d+)/.exec(header)?.[1];
        const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
        if (!header.includes(`v1=${expected}`)) badSignatures += 1;
      }
      if (typeof mark !== "string" || arrivals.has(mark)) return;
      const at = performance.now();
      arrivals.set(mark, at);
      waiting.get(mark)?.(at);
      waiting.delete(mark);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    setSecret: (value) => { secret = value; },
    badSignatures: () => badSignatures,
    /** Resolves with the arrival time of `mark` (ms, performance clock), or null after `timeoutMs`. */
    arrival(mark, timeoutMs) {
      if (arrivals.has(mark)) return Promise.resolve(arrivals.get(mark));
      return new Promise((resolve) => {
        const timer = setTimeout(() => { waiting.delete(mark); resolve(null); }, timeoutMs);
        waiting.set(mark, (at) => { clearTimeout(timer); resolve(at); });
      });
    },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/**
 * Sends `writes` marked writes with `concurrency` in flight through `send(mark)` (a writer
 * does not wait for its delivery before the next write), then waits for the deliveries:
 * answers each write's send → arrival latency and the deliveries per second (first write
 * sent to last arrival). A delivery missing after 60 s is counted, not waited for.
 */
export async function measureDeliveries({ writes, concurrency, prefix, send, receiver }) {
  const pending = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, writes) }, async () => {
    while (next < writes) {
      const mark = `${prefix}-${next++}`;
      const arrived = receiver.arrival(mark, 60_000);
      const sent = performance.now();
      await send(mark);
      pending.push(arrived.then((at) => (at === null ? null : { latency: at - sent, at })));
    }
  }));
  const outcomes = await Promise.all(pending);
  const arrivedOnes = outcomes.filter((o) => o !== null);
  const lastArrival = Math.max(started, ...arrivedOnes.map((o) => o.at));
  return {
    latencies: arrivedOnes.map((o) => o.latency),
    missing: outcomes.length - arrivedOnes.length,
    perSecond: arrivedOnes.length / ((lastArrival - started) / 1000),
  };
}
