/**
 * The attachment-reference check (src/blobs/refs.ts) at both doors that write rows: the
 * agent API's collection routes and an app page's `/_svc/c/…`. Each turns its caller into
 * a RefWriter and names the app; rows without anything shaped like an attachment id pass
 * with no I/O.
 */
import type { Principal } from "../../permissions";
import type { AppContext } from "../types";
import type { AppRow } from "../../db/apps";
import { mentionsAttachment, requireAccessibleRefs, type RefWriter } from "../../blobs/refs";
import { ownedApp, requireLive } from "./app-access";

/** What a store principal may hand out: an agent its own, the owner their account's, anyone else only the app's. */
export function refWriterOf(principal: Principal, ownerOfAgent: string | null = null): RefWriter {
  if (principal.kind === "agent") return { agentId: principal.agentId, accountId: ownerOfAgent };
  if (principal.kind === "owner") return { agentId: null, accountId: principal.humanId };
  return { agentId: null, accountId: null };
}

/** The agent API's check: the app is resolved only when some value looks like an attachment id. */
export async function checkApiRowRefs(c: AppContext, principal: Principal, datas: unknown[]): Promise<void> {
  if (!datas.some(mentionsAttachment)) return;
  const app = requireLive(await ownedApp(c, c.req.param("id")!));
  await requireAccessibleRefs(c.env, app, c.req.param("name")!, datas, refWriterOf(principal, c.get("agent")?.ownerHumanId ?? null));
}

/** An app page's check, with the app the origin serves. */
export async function checkPageRowRefs(env: Env, app: AppRow, collection: string, principal: Principal, datas: unknown[]): Promise<void> {
  await requireAccessibleRefs(env, app, collection, datas, refWriterOf(principal));
}
