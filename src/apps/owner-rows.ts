/**
 * Every live row of one collection as the app's owner sees it, read page by page through
 * the AppStore contract. For Worker code that must walk a whole collection on the owner's
 * behalf (the schedules scan, a template's seed rows), so none of it pages by hand.
 */
import { unwrap, type CallContext, type RowView } from "../../durable-objects/app-store/contract";
import type { AppRow } from "../db/apps";
import { appStore } from "./store";

/** Rows read from the store per page. */
const ROWS_PER_PAGE = 200;

export async function* ownerRows(env: Env, app: AppRow, collection: string): AsyncGenerator<RowView> {
  const call: CallContext = { appId: app.id, version: app.currentVersion!, principal: { kind: "owner", humanId: app.ownerHumanId } };
  const store = appStore(env, app.id);
  let since: string | undefined;
  for (;;) {
    const page = unwrap(await store.listRows(call, collection, { since, limit: ROWS_PER_PAGE }));
    yield* page.rows;
    if (!page.has_more || page.next_cursor === null) return;
    since = page.next_cursor;
  }
}
