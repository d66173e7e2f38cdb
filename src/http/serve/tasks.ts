/**
 * `GET /_svc/tasks?collection=<c>&row=<key>` on an app origin (WIRE §4.3): the latest
 * agent task of each rule for one row, so a page can show "an agent is working on this".
 * The row is read first as the caller, through the same store call as `/_svc/c/…/<key>`:
 * a row the caller cannot read is 404 `row_not_found` here too. Each item is
 * `{ task_type, status, created_at, updated_at }` with status `queued`, `working`, `done`,
 * `failed` or `expired`; never the prompt, the credential or the report.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { unwrap } from "../../apps/store-call";
import { rowTasks } from "../../effects/tasks/views";
import { parseWith } from "../plain-issues";
import { noStore, target } from "./data";
import type { ServeEnv } from "./context";

const query = z.object({ collection: z.string().min(1).max(64), row: z.string().min(1).max(512) });

export function taskRoutes(app: Hono<ServeEnv>): void {
  app.get("/_svc/tasks", async (c) => {
    const { collection, row } = parseWith(query, c.req.query(), "query");
    const t = await target(c);
    unwrap(await t.store.getRow(t.call, collection, row));
    return noStore(c.json({ tasks: await rowTasks(c.env, t.call.appId, collection, row) }));
  });
}
