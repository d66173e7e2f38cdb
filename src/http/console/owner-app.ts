/**
 * What every console page about one owned app starts with: a signed-in person acting as
 * the owner, and the app they name, found exactly as the /v1 routes find it. The person
 * becomes the request's owner actor (as the API's session auth would make them), so the
 * lookup (`ownedApp`) and every store call (`storeCall`: the owner principal) are the
 * API's own, and a human who does not own the app gets the same `app_not_found`. A
 * signed-out visitor is sent to sign in and brought back: to the page itself for a GET,
 * to the app's page after a form post.
 */
import type { AppRow } from "../../db/apps";
import { ownedApp } from "../v1/app-access";
import type { AppContext, HumanCaller } from "../types";
import { currentHuman, toSignIn } from "./page";

/** The console's path of an owned app's page, or of one of its sub-pages (`suffix` starts with a slash). */
export function appPath(app: Pick<AppRow, "id">, suffix = ""): string {
  return `/console/apps/${encodeURIComponent(app.id)}${suffix}`;
}

/** The page of an app's people and access (members, invitations, grant links, service credentials). */
export function membersPath(app: AppRow): string {
  return appPath(app, "/members");
}

/** Opens an app signed in: /authorize hands this person a session for the app's own origin. */
export function openHref(app: AppRow): string {
  return `/authorize?app=${encodeURIComponent(app.slug)}`;
}

export type OwnerAppHandler = (c: AppContext, app: AppRow, human: HumanCaller) => Response | Promise<Response>;

/** A page or form about the app named by `:id`, as its owner; trashed apps included (the handler decides). */
export function ownerAppRoute(handler: OwnerAppHandler) {
  return async (c: AppContext): Promise<Response> => {
    const human = await currentHuman(c);
    const id = c.req.param("id")!;
    if (!human) {
      const here = new URL(c.req.url);
      const back = c.req.method === "GET" ? here.pathname + here.search : `/console/apps/${encodeURIComponent(id)}`;
      return toSignIn(c, back);
    }
    c.set("actor", { kind: "human", ownerHumanId: human.humanId, agentId: null });
    return handler(c, await ownedApp(c, id), human);
  };
}
