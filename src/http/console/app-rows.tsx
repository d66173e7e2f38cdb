/**
 * One collection's rows, read-only, for the app's owner: newest first, a page at a time
 * (a "next page" link carries the cursor), with who wrote each row. A search box keeps the
 * rows whose key or data contains some text; the API's own `q` (`{ where, sort }`, read by
 * the same parser as `GET /v1/apps/:id/collections/:name`) narrows and orders them as it
 * does there. The owner reads as the owner, through the same store call as /v1
 * (`browseRows`); an unknown collection, a bad `q` or a stale cursor is the catalogue's
 * refusal as a page.
 */
import * as z from "zod";
import { appDirectory } from "../../db/directory";
import type { AppRow } from "../../db/apps";
import { appStore } from "../../apps/store";
import { storeCall } from "../../apps/store-call";
import { browseRows } from "../../apps/row-browse";
import { parseQ } from "../row-query";
import { rowListQuery } from "../row-bodies";
import { parseWith } from "../routes";
import { requireLive } from "../v1/app-access";
import type { AppContext } from "../types";
import { When } from "./layout";
import { AuthorCell, authorNamer, DataPreview, NextPage } from "./data-view";
import { appPath, ownerAppRoute } from "./owner-app";
import { renderPage } from "./page";
import type { PageRoute } from "./routes";

const PAGE_ROWS = 25;

const browseQuery = z.object({
  text: z.string().trim().max(200).optional(),
  q: rowListQuery.shape.q,
  after: z.string().max(200).optional(),
});
type BrowseQuery = z.infer<typeof browseQuery>;

function rowsPath(app: AppRow, collection: string, query: BrowseQuery): string {
  const params = new URLSearchParams();
  if (query.text) params.set("text", query.text);
  if (query.q) params.set("q", query.q);
  if (query.after !== undefined) params.set("after", query.after);
  const search = params.toString();
  return appPath(app, `/collections/${encodeURIComponent(collection)}${search ? `?${search}` : ""}`);
}

function SearchForm({ app, collection, query }: { app: AppRow; collection: string; query: BrowseQuery }) {
  return (
    <form method="get" action={rowsPath(app, collection, {})} role="search" class="search">
      <div class="field">
        <label for="row-text">Rows containing</label>
        <input type="text" id="row-text" name="text" value={query.text ?? ""} maxlength={200} autocomplete="off" />{" "}
        <button type="submit" class="primary" id="search-rows">Search</button>{" "}
        {query.text || query.q ? <a href={rowsPath(app, collection, {})} id="clear-search">Show all rows</a> : null}
      </div>
      <details open={query.q ? true : undefined}>
        <summary>Filter with the API's query</summary>
        <div class="field">
          <label for="row-q">q, as on the API: {'{"where": [{"field": …, "op": "eq", "value": …}], "sort": [{"field": …, "dir": "desc"}]}'}</label>
          <input type="text" id="row-q" name="q" value={query.q ?? ""} maxlength={8000} autocomplete="off" class="wide" />
        </div>
        <p class="muted">Without a sort, rows come newest first; with one, in its order.</p>
      </details>
    </form>
  );
}

async function showRows(c: AppContext, target: AppRow): Promise<Response> {
  const app = requireLive(target);
  const collection = c.req.param("name")!;
  const query = parseWith(browseQuery, Object.fromEntries(new URL(c.req.url).searchParams), "query");
  const { where, sort } = parseQ(query.q);
  const [page, directory] = await Promise.all([
    browseRows(appStore(c.env, app.id), storeCall(c, app), collection, { where, sort, text: query.text || undefined, after: query.after, limit: PAGE_ROWS }),
    appDirectory(c.env, app),
  ]);
  const name = authorNamer(directory);
  const next = page.next === null ? null : rowsPath(app, collection, { ...query, after: page.next });
  return renderPage(c, 200, `Rows of ${collection}`, (
    <>
      <p><a href={appPath(app)} id="back-to-app">Back to {app.slug}</a> · <a href={appPath(app, "/feed")}>Live feed</a></p>
      <SearchForm app={app} collection={collection} query={query} />
      {page.rows.length ? (
        <table id="rows" class="records">
          <thead><tr><th scope="col">Key</th><th scope="col">Data</th><th scope="col">Author</th><th scope="col">Last changed</th></tr></thead>
          <tbody>{page.rows.map((row) => (
            <tr data-key={row.key}>
              <th scope="row"><code>{row.key}</code></th>
              <td data-field="data" data-label="Data"><DataPreview data={row.data} /></td>
              <AuthorCell author={row.author} name={name} />
              <td data-label="Last changed"><When iso={row.updated_at} /><br /><span class="muted">{row.version === 1 ? "version 1" : `version ${row.version}, created `}</span>
                {row.version === 1 ? null : <When iso={row.created_at} />}</td>
            </tr>
          ))}</tbody>
        </table>
      ) : <p id="no-rows">{query.text || query.q ? "No rows match." : "This collection has no rows yet."}</p>}
      <NextPage href={next} first={query.after === undefined ? null : rowsPath(app, collection, { ...query, after: undefined })} what={`the rows of ${collection}`} />
    </>
  ));
}

export function appRowsPages(route: PageRoute): void {
  route("get", "/console/apps/:id/collections/:name", ownerAppRoute(showRows));
}
