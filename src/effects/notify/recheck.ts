/**
 * The read check once more, when a held digest is finally sent. A notification was
 * checked when its rule fired (recipients.ts), but email and push then wait for the
 * recipient's digest window, and meanwhile a member may have been removed, lost the role
 * a read list names, or the row may have changed or gone. WIRE §5.5 asks that every
 * recipient pass the data API's read check, so each person's items are checked again
 * against their place in the app now and the row as the store holds it now; what fails
 * is recorded as suppressed with the reason instead of being sent. A submitter (an
 * address, no person) has no read check and is kept.
 */
import type { AppRow } from "../../db/apps";
import { appStore } from "../../apps/store";
import type { CompiledManifest } from "../../manifest";
import type { RowView } from "../../../durable-objects/app-store/contract";
import type { NotificationRow } from "./digests";
import { mayRead, principalsOf } from "./recipients";

export interface Rechecked {
  keep: NotificationRow[];
  suppressed: Array<{ id: string; reason: string }>;
}

export async function recheckReaders(env: Env, app: AppRow, manifest: CompiledManifest, items: NotificationRow[]): Promise<Rechecked> {
  const people = items.some((item) => item.humanId !== null) ? await principalsOf(env, app) : new Map();
  const rows = new Map<string, RowView | null>();
  const rowOf = async (collection: string, key: string): Promise<RowView | null> => {
    const id = JSON.stringify([collection, key]);
    if (!rows.has(id)) {
      const answer = app.currentVersion === null ? null : await appStore(env, app.id).getRow(
        { appId: app.id, version: app.currentVersion, principal: { kind: "owner", humanId: app.ownerHumanId } }, collection, key,
      );
      rows.set(id, answer?.ok ? answer.value : null);
    }
    return rows.get(id)!;
  };
  const result: Rechecked = { keep: [], suppressed: [] };
  for (const item of items) {
    if (item.humanId === null) {
      result.keep.push(item);
      continue;
    }
    const principal = people.get(item.humanId);
    const row = principal ? await rowOf(item.collection, item.rowKey) : null;
    if (!principal) result.suppressed.push({ id: item.id, reason: "no longer the owner or a member of the app" });
    else if (!row) result.suppressed.push({ id: item.id, reason: "the row is no longer there" });
    else if (!mayRead(manifest, principal, item.collection, { key: row.key, creator: row.creator, editor: row.editor, data: row.data })) {
      result.suppressed.push({ id: item.id, reason: "may no longer read the row" });
    } else result.keep.push(item);
  }
  return result;
}
