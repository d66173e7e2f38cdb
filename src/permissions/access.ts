/**
 * The per-collection access summary `GET /v1/apps/:id/roles` shows for each custom role
 * (WIRE §2.5: `member_access` and `grant_access`, "computed by probing the real
 * authorizer"). It asks the same subject matching `authorize` uses, for a stand-in member
 * or grant holder carrying the role, so the summary can never drift from the decisions.
 */
import type { CompiledManifest, Subject } from "../manifest";
import type { Principal } from "./principal";
import { reach, standing, type Standing } from "./subjects";

export type Level = "all" | "own" | "none";
export interface Access {
  read: Level;
  create: "all" | "none";
  update: Level;
  delete: Level;
}

/** What a holder of `role` may do in `collection`, as a member (`member`) or through an unpinned grant link (`grant`). */
export function roleAccess(manifest: CompiledManifest, collection: string, role: string, as: "member" | "grant"): Access | null {
  const c = Object.hasOwn(manifest.collections, collection) ? manifest.collections[collection] : undefined;
  if (!c) return null;
  const holder: Principal = as === "member"
    ? { kind: "member", humanId: "", roles: [role] }
    : { kind: "grant", grantId: "", linkId: "", role, pin: null };
  const s = standing(manifest, holder);
  const level = (list: Subject[], st: Standing): Level => {
    const r = reach(list, st, c.relations);
    return r.all ? "all" : r.terms.length > 0 ? "own" : "none";
  };
  const p = c.permissions;
  const appendOnly = c.appendOnly && !(c.appendOnlyExcept.includes("owner") && s.ownerLevel);
  return {
    read: level(p.read, s),
    create: reach(p.write, s, c.relations).matched.length > 0 ? "all" : "none",
    update: appendOnly ? "none" : level(p.update, s),
    delete: appendOnly ? "none" : level(p.delete, s),
  };
}
