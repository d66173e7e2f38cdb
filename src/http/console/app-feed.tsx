/**
 * An app's live feed for its owner: the recent changes to its rows (created, updated,
 * deleted), newest first, a page at a time, each with its collection, row, author and
 * data. It is read through the same store feed as `GET /v1/apps/:id/feed`, as the owner
 * (`recentFeed`), and refuses the same apps (trashed, dormant, archived, suspended). The
 * page is plain HTML: reloading it shows what happened since.
 */
import * as z from "zod";
import { appDirectory } from "../../db/directory";
import type { AppRow } from "../../db/apps";
import { appStore } from "../../apps/store";
import { storeCall } from "../../apps/store-call";
import { recentFeed, requireFeedReadable } from "../../apps/feed-browse";
import { parseWith } from "../routes";
import { requireLive } from "../v1/app-access";
import type { AppContext } from "../types";
import { When } from "./layout";
import { AuthorCell, authorNamer, DataPreview, NextPage } from "./data-view";
import { appPath, ownerAppRoute } from "./owner-app";
import { renderPage } from "./page";
import type { PageRoute } from "./routes";

const PAGE_ENTRIES = 25;

const feedQuery = z.object({ before: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional() });

const OP_WORDS = { create: "created", update: "updated", delete: "deleted" } as const;

function feedPath(app: AppRow, before?: number): string {
  return appPath(app, before === undefined ? "/feed" : `/feed?before=${before}`);
}

async function showFeed(c: AppContext, target: AppRow): Promise<Response> {
  const app = requireFeedReadable(requireLive(target));
  const query = parseWith(feedQuery, Object.fromEntries(new URL(c.req.url).searchParams), "query");
  const [page, directory] = await Promise.all([
    recentFeed(appStore(c.env, app.id), storeCall(c, app), { before: query.before, limit: PAGE_ENTRIES }),
    appDirectory(c.env, app),
  ]);
  const name = authorNamer(directory);
  return renderPage(c, 200, `Live feed of ${app.slug}`, (
    <>
      <p><a href={appPath(app)} id="back-to-app">Back to {app.slug}</a> · <a href={feedPath(app)} id="refresh-feed">Newest changes</a></p>
      <p class="muted">Every change to the app's rows, newest first. Reload the page to see new ones.</p>
      {page.entries.length ? (
        <table id="feed" class="records">
          <thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">Change</th><th scope="col">Row</th><th scope="col">Author</th><th scope="col">Data</th></tr></thead>
          <tbody>{page.entries.map((entry) => (
            <tr data-seq={String(entry.seq)} data-op={entry.op}>
              <th scope="row">{entry.seq}</th>
              <td data-label="When"><When iso={entry.ts} /></td>
              <td data-label="Change">{entry.purged ? "purged" : OP_WORDS[entry.op]}</td>
              <td data-label="Row"><a href={appPath(app, `/collections/${encodeURIComponent(entry.collection_name)}`)}>{entry.collection_name}</a> <code>{entry.row_key}</code></td>
              <AuthorCell author={entry.author} name={name} />
              <td data-field="data" data-label="Data"><DataPreview data={entry.data} /></td>
            </tr>
          ))}</tbody>
        </table>
      ) : <p id="no-entries">{query.before === undefined ? "Nothing has changed yet." : "No older changes are kept."}</p>}
      <NextPage href={page.next === null ? null : feedPath(app, page.next)} first={query.before === undefined ? null : feedPath(app)} what="the feed" />
    </>
  ));
}

export function appFeedPages(route: PageRoute): void {
  route("get", "/console/apps/:id/feed", ownerAppRoute(showFeed));
}
