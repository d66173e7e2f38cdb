// Grant links in real Chromium against a real local relay (WIRE §4.4): the owner of a
// private app mints a link for a custom role pinned to one row; a fresh browser opens the
// grant URL, the gate trades the `#g=` token for a holder credential (kept in
// localStorage, the fragment gone from the address bar), the document opens, and the
// page's `service.collections.snapshot` holds exactly the pinned row; the holder can do
// what the role allows (update that row) and nothing more (create, delete), and the feed
// socket brings the owner's edits of that row. Once the
// owner revokes the link, the same browser is refused on reload. Every request stays on
// loopback.

import { describe, expect, it } from "vitest";
import { api, ownerWithAgent, useBrowser } from "./support";

const { newPage } = useBrowser();

/** `guest` reads and edits notes (the pin narrows which), never creates or deletes them. */
const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: { Note: { type: "object", properties: { text: { type: "string", maxLength: 200 } }, required: ["text"] } },
  "x-service-manifest": {
    app: { name: "Guest notes" },
    roles: { guest: { label: "Guest", description: "reads and edits the note shared with them" } },
    collections: { notes: { schema: { $ref: "#/$defs/Note" }, read: ["owner", "guest"], write: ["owner"], update: ["owner", "guest"], delete: ["owner"] } },
  },
};

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Guest notes</title></head>
<body><h1 id="content">Guest notes page</h1><ul id="rows"></ul>
<script>
  window.service.ready.then(() => {
    document.getElementById("rows").textContent = window.service.collections.snapshot("notes").map((r) => r.data.text).join("|");
    document.body.dataset.ready = window.service.session.kind;
  });
</script></body></html>`;

/** A fresh browser that can reach only the local relay and its app origins. */
type Svc = {
  service: {
    collections: {
      snapshot(name: string): Array<{ key: string; data: { text: string } }>;
      update(name: string, key: string, data: unknown): Promise<{ data: { text: string } }>;
      create(name: string, data: unknown): Promise<unknown>;
      delete(name: string, key: string): Promise<unknown>;
    };
  };
};

describe("grant links in Chromium", () => {
  it("a fresh browser opens a pinned grant link on a private app, does what the role allows, and is refused once the link is revoked", async () => {
    const key = (await ownerWithAgent("grant-owner")).key;
    const deployed = await api<{ app_id: string; slug: string; url: string }>("/v1/apps", { key, body: { html: PAGE, manifest: MANIFEST, visibility: "private" } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
    const app = deployed.body;
    const notes = `/v1/apps/${app.app_id}/collections/notes`;
    for (const [rowKey, text] of [["shared", "for the guest"], ["other", "not for the guest"]]) {
      expect((await api(notes, { key, body: { key: rowKey, data: { text } } })).status).toBeLessThan(300);
    }

    const minted = await api<{ id: string; grant_url: string }>(`/v1/apps/${app.app_id}/grants`, { key, body: { role: "guest", pin: { row_key: "shared" } } });
    expect(minted.status, JSON.stringify(minted.body)).toBe(201);
    expect(minted.body.grant_url).toMatch(/#g=gr_[0-9a-f]{32}$/);

    // A fresh browser opens the grant URL: the gate trades the token and the document opens.
    const guest = await newPage();
    await guest.goto(minted.body.grant_url);
    await guest.locator("#content", { hasText: "Guest notes page" }).waitFor();
    await guest.locator('body[data-ready="anonymous"]').waitFor();
    expect(new URL(guest.url()).hash).toBe("");
    expect(await guest.evaluate(() => localStorage.getItem("service.grant"))).toMatch(/^grh_[0-9a-f]{32}$/);
    expect(await guest.evaluate(() => (window as unknown as Svc).service.collections.snapshot("notes").map((r) => r.key))).toEqual(["shared"]);
    expect(await guest.locator("#rows").textContent()).toBe("for the guest");
    const session = await guest.evaluate(async () => {
      const res = await fetch("/_svc/session", { headers: { authorization: `Bearer ${localStorage.getItem("service.grant")}` } });
      return { status: res.status, body: await res.json() };
    });
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ kind: "anonymous", humanId: null, grant: { role: "guest" } });

    // What the role allows: edit the pinned note. What it does not: create, delete.
    const edited = await guest.evaluate(() => (window as unknown as Svc).service.collections.update("notes", "shared", { text: "edited by the guest" }).then((r) => r.data.text));
    expect(edited).toBe("edited by the guest");
    const refused = await guest.evaluate(async () => {
      const { collections } = (window as unknown as Svc).service;
      const code = (p: Promise<unknown>) => p.then(() => "ok", (e: { code?: string }) => e.code ?? String(e));
      return { create: await code(collections.create("notes", { text: "new" })), delete: await code(collections.delete("notes", "shared")) };
    });
    expect(refused).toEqual({ create: "collection_write_forbidden", delete: "collection_delete_forbidden" });
    const read = await api<{ row: { data: { text: string } } }>(`${notes}/shared`, { key });
    expect(read.body.row.data.text).toBe("edited by the guest");
    expect((await api(`${notes}/other`, { key })).status).toBe(200);

    // The feed socket (opened with the holder credential) brings the owner's edits of the pinned row, and only those.
    expect((await api(`${notes}/other`, { method: "PATCH", key, body: { data: { text: "still not for the guest" } } })).status).toBe(200);
    expect((await api(`${notes}/shared`, { method: "PATCH", key, body: { data: { text: "edited by the owner" } } })).status).toBe(200);
    await guest.waitForFunction(() => (window as unknown as Svc).service.collections.snapshot("notes").map((r) => r.data.text).join("|") === "edited by the owner");
    expect(await guest.evaluate(() => (window as unknown as Svc).service.collections.snapshot("notes").map((r) => r.key))).toEqual(["shared"]);

    // A reload keeps the browser in (the remembered credential, no fragment needed).
    await guest.reload();
    await guest.locator('body[data-ready="anonymous"]').waitFor();
    expect(await guest.locator("#rows").textContent()).toBe("edited by the owner");

    // The owner revokes the link: the same browser's next load is refused.
    expect((await api(`/v1/apps/${app.app_id}/grants/${minted.body.id}`, { method: "DELETE", key })).status).toBe(200);
    await guest.reload();
    await guest.locator("#svc-sign-in").waitFor();
    expect(await guest.content()).not.toContain("Guest notes page");
    expect(await guest.content()).not.toContain("edited by the owner");
    expect(await guest.evaluate(() => localStorage.getItem("service.grant"))).toBeNull();
  });
});
