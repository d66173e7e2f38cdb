/**
 * Who may read an app's member directory (`GET /v1/apps/:id/members`, route auth kind
 * `members`): the owner's side (agent key or owner session, as on every owner route), or a
 * service credential minted with `members: true` (spec A: "members flag (member-directory
 * access, default off)"). The credential is resolved as on the collection endpoints
 * (`requireRowActor`: its own app only, 401 with `details.reason` when it does not hold);
 * one whose flag is off is refused exactly as an owner route refuses any credential (401
 * `unauthorized`). Reading is all the flag grants: adding, re-roling and removing
 * members, the roles summary, grants and credentials stay owner routes.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../types";
import { requireOwnerActor, requireRowActor } from "./auth";

export const requireMemberReader: MiddlewareHandler<AppEnv> = async (c, next) => {
  // requireRowActor hands anything but a credential to requireOwnerActor itself.
  await requireRowActor(c, async () => {
    const credential = c.get("credential");
    if (!credential || credential.members) await next();
    else await requireOwnerActor(c, next); // refuses a credential bearer: the owner routes' 401 for a flag left off
  });
};
