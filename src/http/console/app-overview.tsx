/**
 * An owned app's page in the console (`/console/apps/:id`): what the app is (its name,
 * slug, address, status, live version, rows and storage), who can open it (visibility and
 * share link, `app-settings.tsx`), what its manifest lets it do (the same disclosure as
 * `GET /v1/apps/:id/disclosure`), its collections with their rows and the live feed, its
 * outbound connections (`app-connections.tsx`), its visits this week (`app-visits.tsx`), its people and access, and the way to the trash. A trashed app's page is the trash view
 * (`app-trash.tsx`).
 */
import type { Child } from "hono/jsx";
import { config } from "../../config";
import type { AppRow } from "../../db/apps";
import { disclosure, type Disclosure } from "../../manifest";
import { liveManifest } from "../../apps/members";
import { appStore } from "../../apps/store";
import { appUrl } from "../../apps/urls";
import { listConnections } from "../../db/connections";
import { connectionView, consentUrl } from "../../connections/manage";
import { ConnectionsSection } from "./app-connections";
import { VisitsSection, visitsThisWeek } from "./app-visits";
import type { AppContext } from "../types";
import { Flash, sizeText, When } from "./layout";
import { VisibilitySection, VISIBILITY_WORDS } from "./app-settings";
import { trashedPage } from "./app-trash";
import { appPath, membersPath, openHref, ownerAppRoute } from "./owner-app";
import { lookup, renderPage } from "./page";
import type { PageRoute } from "./routes";

const flashes: Record<string, (app: AppRow) => string> = {
  visibility: (app) => `Saved. ${VISIBILITY_WORDS[app.visibility]}`,
  restored: (app) => `Restored ${app.slug} with all its data.`,
};

function Fact({ name, label, children }: { name: string; label: string; children: Child }) {
  return <><dt>{label}</dt><dd data-fact={name}>{children}</dd></>;
}

function Collections({ app, told }: { app: AppRow; told: Disclosure }) {
  return (
    <section aria-labelledby="data-heading">
      <h2 id="data-heading">Data</h2>
      <p><a href={appPath(app, "/feed")} id="open-feed">Live feed: the latest changes to every collection</a></p>
      <p><a href={appPath(app, "/tasks")} id="open-tasks">Agent tasks: queued, being worked on, done and dead-lettered</a></p>
      {told.collections.length ? (
        <table id="collections">
          <thead><tr><th scope="col">Collection</th><th scope="col">Read by</th><th scope="col">Written by</th><th scope="col">Rows</th></tr></thead>
          <tbody>{told.collections.map((col) => (
            <tr data-collection={col.name}>
              <th scope="row"><code>{col.name}</code>{col.append_only ? <span class="muted"> (append-only)</span> : null}</th>
              <td>{col.read.join(", ") || "nobody"}</td>
              <td>{col.write.join(", ") || "nobody"}</td>
              <td><a href={appPath(app, `/collections/${encodeURIComponent(col.name)}`)}>Browse rows<span class="vh"> of {col.name}</span></a></td>
            </tr>
          ))}</tbody>
        </table>
      ) : <p id="no-collections">This app declares no collections.</p>}
    </section>
  );
}

async function showApp(c: AppContext, app: AppRow): Promise<Response> {
  if (app.status === "deleted") return trashedPage(c, app);
  const [manifest, usage, connections, visits] = await Promise.all([
    liveManifest(c.env, app), appStore(c.env, app.id).usage(), listConnections(c.env, app.id), visitsThisWeek(c.env, app.id),
  ]);
  const told = manifest ? disclosure(manifest) : null;
  const flash = lookup(flashes, c.req.query("flash"));
  const cfg = config(c.env);
  return renderPage(c, 200, told?.app.name ?? app.slug, (
    <>
      <Flash text={flash ? flash(app) : null} />
      {told?.app.description ? <p id="app-description">{told.app.description}</p> : null}
      <p class="actions">
        <a href={openHref(app)} id="open-app">Open the app</a>
        <a href={membersPath(app)} id="people-and-access">People and access</a>
        <a href="/console/apps">All your apps</a>
      </p>
      <dl id="app-facts" class="facts">
        <Fact name="name" label="Name">{told?.app.name ?? <span class="muted">no live version</span>}</Fact>
        <Fact name="slug" label="Slug"><code>{app.slug}</code></Fact>
        <Fact name="url" label="Address"><code>{appUrl(cfg, app.slug)}</code></Fact>
        <Fact name="status" label="Status">{app.status}</Fact>
        <Fact name="version" label="Live version">{app.currentVersion ?? <span class="muted">none</span>}</Fact>
        <Fact name="visibility" label="Visibility">{app.visibility}</Fact>
        <Fact name="usage" label="Stored">{`${usage.rowCount} of ${cfg.limits.MAX_ROWS_PER_APP} rows, ${sizeText(usage.storageBytes)}`}</Fact>
        <Fact name="timezone" label="Time zone">{app.timezone ?? <span class="muted">not set</span>}</Fact>
        <Fact name="created" label="Created"><When iso={app.createdAt} /></Fact>
        <Fact name="last-activity" label="Last activity"><When iso={app.lastActivityAt} /></Fact>
      </dl>
      <VisitsSection report={visits} />
      <VisibilitySection app={app} />
      {told ? <Collections app={app} told={told} /> : null}
      <ConnectionsSection connections={connections.map(connectionView)} authorizeUrl={(name) => consentUrl(cfg.apiOrigin, app.id, name)} />
      {told ? (
        <section aria-labelledby="disclosure-heading">
          <h2 id="disclosure-heading">What this app may do</h2>
          <p class="muted">Read from its live manifest; the relay enforces exactly this.</p>
          <ul id="disclosure">{told.lines.map((line) => <li>{line}</li>)}</ul>
        </section>
      ) : null}
      <section aria-labelledby="delete-heading">
        <h2 id="delete-heading">Delete</h2>
        <p>Deleting moves the app to the trash, where it can be restored for a while before it is purged for good.</p>
        <a href={appPath(app, "/trash")} id="delete-app" class="danger">Delete {app.slug}…</a>
      </section>
    </>
  ));
}

export function appOverviewPages(route: PageRoute): void {
  route("get", "/console/apps/:id", ownerAppRoute(showApp));
}
