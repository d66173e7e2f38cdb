/**
 * "Your apps" in the console: the apps this person owns (each leading to its page, its
 * people and access, and the app itself), the apps in their trash (until the sweep purges
 * them), and the apps they joined as a member, with their custom roles.
 */
import { listApps } from "../../db/apps";
import { appsJoinedBy } from "../../db/members";
import { purgeAfter } from "../../apps/trash";
import type { AppContext } from "../types";
import { Flash, When } from "./layout";
import { Roles } from "./app-members";
import { appPath, membersPath, openHref } from "./owner-app";
import { currentHuman, lookup, renderPage, toSignIn } from "./page";
import type { PageRoute } from "./routes";

const flashes: Record<string, string> = {
  purged: "Purged the app for good: its rows, feed and records are gone.",
};

async function appsList(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, "/console/apps");
  const [owned, trashed, joined] = await Promise.all([
    listApps(c.env, human.humanId, { status: "live", limit: 1000 }),
    listApps(c.env, human.humanId, { status: "deleted", limit: 1000 }),
    appsJoinedBy(c.env, human.humanId),
  ]);
  return renderPage(c, 200, "Your apps", (
    <>
      <Flash text={lookup(flashes, c.req.query("flash"))} />
      <section aria-labelledby="owned-heading">
        <h2 id="owned-heading">Apps you own</h2>
        {owned.length ? (
          <table id="owned-apps">
            <thead><tr><th scope="col">App</th><th scope="col">Visibility</th><th scope="col">Status</th><th scope="col">Last activity</th><th scope="col">Actions</th></tr></thead>
            <tbody>{owned.map((app) => (
              <tr data-app-id={app.id} data-role="owner">
                <th scope="row"><a href={appPath(app)}>{app.slug}</a></th>
                <td>{app.visibility}</td>
                <td>{app.status}</td>
                <td><When iso={app.lastActivityAt} /></td>
                <td class="actions">
                  <a href={openHref(app)}>Open<span class="vh"> {app.slug}</span></a>
                  <a href={membersPath(app)}>Members<span class="vh"> of {app.slug}</span></a>
                </td>
              </tr>
            ))}</tbody>
          </table>
        ) : <p id="no-owned-apps">You own no apps yet. Your agent deploys them with <code>service deploy</code>.</p>}
      </section>
      {trashed.length ? (
        <section aria-labelledby="trash-heading">
          <h2 id="trash-heading">In the trash</h2>
          <table id="trashed-apps">
            <thead><tr><th scope="col">App</th><th scope="col">Deleted</th><th scope="col">Purged for good on</th></tr></thead>
            <tbody>{trashed.map((app) => (
              <tr data-app-id={app.id} data-status="deleted">
                <th scope="row"><a href={appPath(app)}>{app.slug}</a></th>
                <td><When iso={app.deletedAt} /></td>
                <td>{app.deletedAt ? <When iso={purgeAfter(app.deletedAt)} /> : null}</td>
              </tr>
            ))}</tbody>
          </table>
        </section>
      ) : null}
      <section aria-labelledby="joined-heading">
        <h2 id="joined-heading">Apps you joined</h2>
        {joined.length ? (
          <table id="joined-apps">
            <thead><tr><th scope="col">App</th><th scope="col">Role</th><th scope="col">Custom roles</th><th scope="col">Joined</th></tr></thead>
            <tbody>{joined.map((j) => (
              <tr data-app-id={j.app.id} data-role="member">
                <th scope="row"><a href={openHref(j.app)}>{j.app.slug}</a></th>
                <td>member</td>
                <td><Roles roles={j.customRoles} /></td>
                <td><When iso={j.joinedAt} /></td>
              </tr>
            ))}</tbody>
          </table>
        ) : <p id="no-joined-apps">You have not joined anyone else's app.</p>}
      </section>
    </>
  ));
}

export function appsListPages(route: PageRoute): void {
  route("get", "/console/apps", appsList);
}
