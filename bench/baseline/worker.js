// Worker → Durable Object → SQLite with nothing else: no auth, no validation, no feed.
// POST /rows forwards the request to the object (stub.fetch), which inserts the body as one
// row and sends it, as one serialised frame, to every socket opened on GET /ws
// (hibernatable, no per-reader filtering); POST /rows/rpc makes the same insert as an RPC
// call, the way the relay reaches its store (and the faster of the two); GET /rows?limit=N
// reads the newest N rows. POST /hooked enqueues its body to a Queue whose consumer POSTs
// it to HOOK_TARGET (the webhook baseline: no outbox, journal or signature). PUT /r2/<key>
// writes the body to R2 as it is and GET /r2/<key> reads it back (the attachment baseline:
// no auth, sniffing, hashing, re-encoding or D1 row); GET /thumb/<key>?w=N reads an image
// from R2, resizes it through the Images binding and writes the result beside it (the
// thumbnail's first hit, without the relay's checks).
import { DurableObject } from "cloudflare:workers";

export class BaselineStore extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, data TEXT NOT NULL, created_at INTEGER NOT NULL)");
  }

  /** The insert alone, as an RPC method (no frames: the RPC path is only used for throughput). */
  async insert(body) {
    return this.ctx.storage.sql.exec("INSERT INTO rows (data, created_at) VALUES (?, ?) RETURNING id", body, Date.now()).one().id;
  }

  async fetch(request) {
    if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
      const [client, server] = Object.values(new WebSocketPair());
      this.ctx.acceptWebSocket(server);
      return new Response(null, { status: 101, webSocket: client });
    }
    if (request.method === "GET") {
      const limit = Math.min(Number(new URL(request.url).searchParams.get("limit")) || 100, 1000);
      const rows = this.ctx.storage.sql.exec("SELECT id, data, created_at FROM rows ORDER BY id DESC LIMIT ?", limit).toArray();
      return new Response(JSON.stringify({ rows: rows.map((r) => ({ id: r.id, data: JSON.parse(r.data), created_at: r.created_at })) }), { headers: { "content-type": "application/json" } });
    }
    const body = await request.text();
    const cursor = this.ctx.storage.sql.exec("INSERT INTO rows (data, created_at) VALUES (?, ?) RETURNING id", body, Date.now());
    const { id } = cursor.one();
    const sockets = this.ctx.getWebSockets();
    if (sockets.length) {
      // The relay's entry frame, field for field (WIRE §2.4), so both send the same bytes.
      const entry = {
        seq: id, op: "create", collection_name: "pings", row_key: String(id).padStart(26, "0"), row_version: 1,
        data: JSON.parse(body), author: { kind: "agent", id: "0".repeat(26) }, ts: new Date().toISOString(),
      };
      const frame = JSON.stringify({ type: "entry", entry });
      for (const ws of sockets) {
        try { ws.send(frame); } catch { /* closing */ }
      }
    }
    return new Response(JSON.stringify({ id }), { status: 201, headers: { "content-type": "application/json" } });
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/health") return new Response("ok");
    if (url.pathname === "/hooked" && request.method === "POST") {
      await env.HOOKS.send(await request.text());
      return new Response(null, { status: 202 });
    }
    if (url.pathname.startsWith("/r2/")) {
      const key = url.pathname.slice("/r2/".length);
      if (request.method === "PUT") {
        const bytes = await request.arrayBuffer();
        await env.BLOBS.put(key, bytes);
        return new Response(JSON.stringify({ key, size: bytes.byteLength }), { status: 201, headers: { "content-type": "application/json" } });
      }
      const object = await env.BLOBS.get(key);
      return object ? new Response(object.body) : new Response("not found", { status: 404 });
    }
    if (url.pathname.startsWith("/thumb/")) {
      const key = url.pathname.slice("/thumb/".length);
      const width = Number(url.searchParams.get("w")) || 256;
      const source = await env.BLOBS.get(key);
      if (!source) return new Response("not found", { status: 404 });
      const result = await env.IMAGES.input(source.body).transform({ width, fit: "scale-down" }).output({ format: "image/jpeg" });
      const bytes = new Uint8Array(await result.response().arrayBuffer());
      await env.BLOBS.put(`${key}/w${width}`, bytes);
      return new Response(bytes, { headers: { "content-type": result.contentType() } });
    }
    const stub = env.STORE.get(env.STORE.idFromName("one"));
    if (url.pathname === "/rows/rpc" && request.method === "POST") {
      const id = await stub.insert(await request.text());
      return new Response(JSON.stringify({ id }), { status: 201, headers: { "content-type": "application/json" } });
    }
    if (url.pathname !== "/rows" && url.pathname !== "/ws") return new Response("not found", { status: 404 });
    return stub.fetch(request);
  },

  async queue(batch, env) {
    await Promise.all(batch.messages.map(async (message) => {
      const res = await fetch(env.HOOK_TARGET, { method: "POST", headers: { "content-type": "application/json" }, body: message.body });
      await res.arrayBuffer();
      message.ack();
    }));
  },
};
