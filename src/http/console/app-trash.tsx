/**
 * Deleting an app from the console, in the same steps as the API: move it to the trash
 * (its data kept, restorable until the sweep purges it), restore it, or purge it now for
 * good. Each destructive step asks first on a page of its own: trashing confirms with a
 * button, purging with the app's slug typed out. The forms act through the same functions
 * as `DELETE /v1/apps/:id`, `POST …/restore` and `POST …/purge` (src/apps/trash.ts). A
 * trashed app's console page is the trash view here: when it goes for good, and the
 * restore and purge buttons.
 */
import * as z from "zod";
import type { AppRow } from "../../db/apps";
import { purgeAfter, purgeTrashedApp, requireTrashed, restoreTrashedApp, TRASH_DAYS, trashApp } from "../../apps/trash";
import { parseWith } from "../routes";
import { requireLive } from "../v1/app-access";
import type { AppContext } from "../types";
import { Alert, Flash, When } from "./layout";
import { appPath, ownerAppRoute } from "./owner-app";
import { lookup, readForm, renderPage, seeOther } from "./page";
import type { PageRoute } from "./routes";

const trashFlashes: Record<string, string> = {
  trashed: "Moved the app to the trash. Nobody can open it now; restore it to bring it back with all its data.",
};

/** The page of an app in the trash. */
export function trashedPage(c: AppContext, app: AppRow): Response | Promise<Response> {
  return renderPage(c, 200, `${app.slug} is in the trash`, (
    <>
      <Flash text={lookup(trashFlashes, c.req.query("flash"))} />
      <p id="trash-summary" data-status="deleted">Deleted <When iso={app.deletedAt} />. Its rows, feed and files are kept until{" "}
        {app.deletedAt ? <When iso={purgeAfter(app.deletedAt)} /> : "the next sweep"}, then purged for good.</p>
      <div class="actions">
        <form method="post" action={appPath(app, "/restore")}>
          <button type="submit" class="primary" id="restore-app">Restore {app.slug}</button>
        </form>
        <a href={appPath(app, "/purge")} id="purge-app">Purge now…</a>
      </div>
      <p><a href="/console/apps">All your apps</a></p>
    </>
  ));
}

function confirmTrash(c: AppContext, target: AppRow): Response | Promise<Response> {
  const app = requireLive(target);
  return renderPage(c, 200, `Delete ${app.slug}?`, (
    <>
      <p>The app goes to the trash: nobody can open it or change its data, and every open page loses its live connection.</p>
      <p>Its rows, feed and files are kept for {TRASH_DAYS} days. Until then you can restore it from the trash; afterwards it is purged for good.</p>
      <div class="actions">
        <form method="post" action={appPath(app, "/trash")}>
          <button type="submit" class="danger" id="confirm-trash">Move {app.slug} to the trash</button>
        </form>
        <a href={appPath(app)} id="cancel">Keep it</a>
      </div>
    </>
  ));
}

async function trash(c: AppContext, app: AppRow): Promise<Response> {
  await trashApp(c.env, app);
  return seeOther(c, `${appPath(app)}?flash=trashed`);
}

async function restore(c: AppContext, app: AppRow): Promise<Response> {
  await restoreTrashedApp(c.env, app);
  return seeOther(c, `${appPath(app)}?flash=restored`);
}

function purgePage(c: AppContext, app: AppRow, status = 200, error: string | null = null): Response | Promise<Response> {
  return renderPage(c, status, `Purge ${app.slug} for good?`, (
    <>
      <p>This destroys the app now: every row, the feed, its files and its records. It cannot be undone.</p>
      <Alert text={error} />
      <form method="post" action={appPath(app, "/purge")}>
        <div class="field">
          <label for="confirm-slug">Type the app's slug, <code>{app.slug}</code>, to confirm</label>
          <input type="text" id="confirm-slug" name="slug" required autocomplete="off" spellcheck={false} maxlength={100}
            aria-describedby={error ? "form-error" : undefined} />
        </div>
        <div class="actions">
          <button type="submit" class="danger" id="confirm-purge">Purge {app.slug} for good</button>
          <a href={appPath(app)} id="cancel">Keep it in the trash</a>
        </div>
      </form>
    </>
  ));
}

const purgeForm = z.object({ slug: z.string().trim().max(100) });

async function purge(c: AppContext, target: AppRow): Promise<Response> {
  const app = requireTrashed(target);
  const { slug } = parseWith(purgeForm, { slug: (await readForm(c)).get("slug") ?? "" }, "body");
  if (slug !== app.slug) return purgePage(c, app, 400, `That is not this app's slug. Type ${app.slug} to purge it.`);
  await purgeTrashedApp(c.env, app);
  return seeOther(c, "/console/apps?flash=purged");
}

export function appTrashPages(route: PageRoute): void {
  route("get", "/console/apps/:id/trash", ownerAppRoute(confirmTrash));
  route("post", "/console/apps/:id/trash", ownerAppRoute(trash));
  route("post", "/console/apps/:id/restore", ownerAppRoute(restore));
  route("get", "/console/apps/:id/purge", ownerAppRoute((c, app) => purgePage(c, requireTrashed(app))));
  route("post", "/console/apps/:id/purge", ownerAppRoute(purge));
}
