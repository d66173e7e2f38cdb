// Worker → Durable Object → SQLite with nothing else: no auth, no validation, no feed.
// POST /rows inserts the body as one row; GET /rows?limit=N reads the newest N rows.
import { DurableObject } from "cloudflare:workers";

export class BaselineStore extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, data TEXT NOT NULL, created_at INTEGER NOT NULL)");
  }

  async fetch(request) {
    if (request.method === "GET") {
      const limit = Math.min(Number(new URL(request.url).searchParams.get("limit")) || 100, 1000);
      const rows = this.ctx.storage.sql.exec("SELECT id, data, created_at FROM rows ORDER BY id DESC LIMIT ?", limit).toArray();
      return new Response(JSON.stringify({ rows: rows.map((r) => ({ id: r.id, data: JSON.parse(r.data), created_at: r.created_at })) }), { headers: { "content-type": "application/json" } });
    }
    const body = await request.text();
    const cursor = this.ctx.storage.sql.exec("INSERT INTO rows (data, created_at) VALUES (?, ?) RETURNING id", body, Date.now());
    const { id } = cursor.one();
    return new Response(JSON.stringify({ id }), { status: 201, headers: { "content-type": "application/json" } });
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/health") return new Response("ok");
    if (url.pathname !== "/rows") return new Response("not found", { status: 404 });
    const stub = env.STORE.get(env.STORE.idFromName("one"));
    return stub.fetch(request);
  },
};
