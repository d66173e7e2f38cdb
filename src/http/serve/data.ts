/**
 * The page's data API on its own app origin (WIRE §4.3), same shapes as the agent door
 * (`/v1/apps/:id/collections/:name`, WIRE §2.3):
 *
 * | method | path | body | answer |
 * |---|---|---|---|
 * | GET | `/_svc/c/<collection>` | query `since`, `limit` (1..1000), `q` = `{ where?, sort? }` | `{ rows, next_cursor, has_more }` |
 * | GET | `/_svc/count/<collection>` | | `{ count }` (gated by countRead) |
 * | POST | `/_svc/c/<collection>` | `{ data, key?, on? }` | 201 `{ row }`, or 200 `{ row, deduped: true }` / an `on` upsert |
 * | GET | `/_svc/c/<collection>/<key>` | | `{ row }` |
 * | PATCH | `/_svc/c/<collection>/<key>` | `{ data, if_match? }` | `{ row }` |
 * | DELETE | `/_svc/c/<collection>/<key>` | optional `{ if_match }` | `{ deleted: true, key }` |
 * | GET | `/_svc/members` | | `{ members: [{ kind, id, displayName, role? }] }`: owner, members, the owner's agents (signed-in viewers) |
 *
 * Who calls is decided by src/auth/page-caller.ts (app session, share pass, visitor
 * token, or anonymous on public/link apps); what they may do is decided by the app's
 * AppStore through the very RPC methods the agent API calls, so the page door has no
 * permission logic of its own. Anonymous and visitor writes are also held to a per-address rate (60 a minute).
 * Failures are the catalogue envelope.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { RelayError } from "../../errors";
import { config } from "../../config";
import { appStore } from "../../apps/store";
import { unwrap } from "../../apps/store-call";
import { displayName } from "../../db/humans";
import { appDirectory } from "../../db/directory";
import { hitRateLimit } from "../../db/rate-limit";
import { readJsonBody } from "../body";
import { parseQ } from "../row-query";
import { rowCreate, rowDelete, rowListQuery, rowUpdate } from "../row-bodies";
import { parseWith } from "../plain-issues";
import type { AppContext } from "../types";
import type { CallContext } from "../../../durable-objects/app-store/contract";
import { assertSameOrigin, clientIp, credentialsFromHeaders, resolveCaller } from "./caller";
import type { PageCaller } from "../../auth/page-caller";
import type { ServeContext, ServeEnv } from "./context";
import { envelope } from "./errors";
import { challengeOutcome } from "../../auth/turnstile";
import { requireRowData } from "../../apps/store-call";
import { checkPageRowRefs } from "../v1/attachments-refs";


export interface Target {
  caller: PageCaller;
  call: CallContext;
  store: ReturnType<typeof appStore>;
  collection: string;
}

/** The caller and store call of a page data path (the tasks view reads a row through it too). */
export async function target(c: ServeContext): Promise<Target> {
  const served = c.get("served");
  assertSameOrigin(c, served);
  const live = await served.live();
  const caller = await resolveCaller(c.env, served, live.policy, credentialsFromHeaders(c), clientIp(c));
  return {
    caller,
    call: {
      appId: served.app.id, version: served.app.currentVersion!, principal: caller.principal,
      challenge: await challengeOutcome(c.env, c.req.header("x-service-challenge"), clientIp(c)),
    },
    store: appStore(c.env, served.app.id),
    collection: c.req.param("collection") ?? "",
  };
}

async function writeTarget(c: ServeContext): Promise<Target> {
  const t = await target(c);
  const kind = t.caller.principal.kind;
  if (kind === "anonymous" || kind === "visitor") await hitRateLimit(c.env, `svc-write:${clientIp(c)}`, config(c.env).rateLimit.pageWrite, 60);
  return t;
}

async function body<T extends z.ZodType>(c: ServeContext, schema: T, optional: boolean): Promise<z.infer<T> | undefined> {
  const raw = await readJsonBody(c as unknown as AppContext, optional, config(c.env).maxJsonBodyBytes);
  return raw === undefined ? undefined : parseWith(schema, raw, "body");
}

export function noStore(res: Response): Response {
  res.headers.set("Cache-Control", "no-store");
  return res;
}

function methodNotAllowed(c: ServeContext, allow: string[]): Response {
  const path = new URL(c.req.url).pathname;
  return envelope(c, new RelayError("method_not_allowed", `${c.req.method} is not supported on ${path}; use ${allow.join(", ")}.`,
    { method: c.req.method, allow }, { Allow: allow.join(", ") }));
}

export function dataRoutes(app: Hono<ServeEnv>): void {
  app.get("/_svc/c/:collection", async (c) => {
    const t = await target(c);
    const query = parseWith(rowListQuery, c.req.query(), "query");
    const { where, sort } = parseQ(query.q);
    return noStore(c.json(unwrap(await t.store.listRows(t.call, t.collection, { where, sort, since: query.since, limit: query.limit ?? 100 }))));
  });

  app.post("/_svc/c/:collection", async (c) => {
    const t = await writeTarget(c);
    const input = (await body(c, rowCreate, false))!;
    requireRowData(input.data, "data");
    await checkPageRowRefs(c.env, c.get("served").app, t.collection, t.call.principal, [input.data]);
    const result = unwrap(await t.store.createRow(t.call, t.collection, input));
    return noStore(c.json({ row: result.row, ...(result.deduped ? { deduped: true } : {}) }, result.created ? 201 : 200));
  });

  app.get("/_svc/c/:collection/:key", async (c) => {
    const t = await target(c);
    return noStore(c.json({ row: unwrap(await t.store.getRow(t.call, t.collection, c.req.param("key"))) }));
  });

  app.patch("/_svc/c/:collection/:key", async (c) => {
    const t = await writeTarget(c);
    const input = (await body(c, rowUpdate, false))!;
    requireRowData(input.data, "data");
    await checkPageRowRefs(c.env, c.get("served").app, t.collection, t.call.principal, [input.data]);
    return noStore(c.json({ row: unwrap(await t.store.updateRow(t.call, t.collection, c.req.param("key"), input)) }));
  });

  app.delete("/_svc/c/:collection/:key", async (c) => {
    const t = await writeTarget(c);
    const input = (await body(c, rowDelete, true)) ?? {};
    const key = c.req.param("key");
    unwrap(await t.store.deleteRow(t.call, t.collection, key, input));
    return noStore(c.json({ deleted: true as const, key }));
  });

  app.get("/_svc/count/:collection", async (c) => {
    const t = await target(c);
    return noStore(c.json({ count: unwrap(await t.store.countRows(t.call, t.collection)) }));
  });

  /**
   * The people and agents behind an app, for `members.list()` / `nameFor()`: the owner,
   * the members and the owner's agents. Never emails.
   */
  app.get("/_svc/members", async (c) => {
    const served = c.get("served");
    assertSameOrigin(c, served);
    const live = await served.live();
    const caller = await resolveCaller(c.env, served, live.policy, credentialsFromHeaders(c), clientIp(c));
    if (caller.session.kind === "anonymous") {
      throw new RelayError("forbidden", "Only people signed in to this app see who else is in it.");
    }
    const ownerId = served.app.ownerHumanId;
    const { owner, members, agents } = await appDirectory(c.env, served.app);
    return noStore(c.json({
      members: [
        { kind: "human", id: ownerId, displayName: owner ? displayName(owner) : "The owner", role: "owner" },
        ...members.map((m) => ({ kind: "human", id: m.id, displayName: m.name ?? m.email.split("@")[0], role: "member" })),
        ...agents.map((a) => ({ kind: "agent", id: a.id, displayName: a.name ?? "An agent" })),
      ],
    }));
  });

  app.all("/_svc/c/:collection", (c) => methodNotAllowed(c, ["GET", "HEAD", "POST"]));
  app.all("/_svc/c/:collection/:key", (c) => methodNotAllowed(c, ["GET", "HEAD", "PATCH", "DELETE"]));
  app.all("/_svc/count/:collection", (c) => methodNotAllowed(c, ["GET", "HEAD"]));
  app.all("/_svc/members", (c) => methodNotAllowed(c, ["GET", "HEAD"]));
}
