// The owner console's app and account pages in real Chromium against a real local relay,
// clicked through as a person would: an app's page with its facts and disclosure; making
// it a link app (the share link opens the app) and rotating the link (the old one stops
// opening it); a collection's rows newest first, with the author, paged to the end and
// searched; the live feed; trash, restore and purge; the account page and its
// product-update email toggle; /account/delete opened signed out; and the device page
// showing the code and the asking agent before sign-in. Every request stays on loopback.
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { api, ownerWithAgent, relayUrl, signInHere, uniqueEmail, useBrowser } from "./support";

const { newPage } = useBrowser();

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: { Note: { type: "object", properties: { text: { type: "string", maxLength: 200 } }, required: ["text"] } },
  "x-service-manifest": {
    app: { name: "Console notes", description: "Notes an agent keeps" },
    collections: { notes: { schema: { $ref: "#/$defs/Note" }, read: ["member"], write: ["owner", "member"], delete: ["owner"] } },
  },
};

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Console notes</title></head>
<body><h1 id="content">Console notes page</h1></body></html>`;

interface Deployed { app_id: string; slug: string; url: string }

/** An owner with an agent and a deployed private app holding `notes` notes ("note 0" … oldest first). */
async function ownerWithApp(notes = 0): Promise<{ email: string; key: string; app: Deployed }> {
  const { email, key } = await ownerWithAgent("console");
  const deployed = await api<Deployed>("/v1/apps", { key, body: { html: PAGE, manifest: MANIFEST, visibility: "private" } });
  expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
  const app = deployed.body;
  if (notes > 0) {
    const rows = Array.from({ length: notes }, (_, i) => ({ data: { text: `note ${i}` } }));
    const batch = await api<{ ok_count: number }>(`/v1/apps/${app.app_id}/collections/notes/batch`, { key, body: { rows } });
    expect(batch.body.ok_count).toBe(notes);
  }
  return { email, key, app };
}

/** Opens a console page signed out, signs in through the outbox, and lands back on it. */
async function signedInAt(path: string, email: string): Promise<Page> {
  const p = await newPage();
  await p.goto(`${relayUrl}${path}`);
  await signInHere(p, email);
  await p.waitForURL(`${relayUrl}${path}`);
  return p;
}

async function heading(p: Page, text: string): Promise<void> {
  await p.locator("main h1", { hasText: text }).waitFor();
}

function texts(p: Page, selector: string): Promise<string[]> {
  return p.locator(selector).allTextContents();
}

describe("owner console in Chromium: an app", () => {
  it("shows the app's facts, makes it a link app whose share link opens it, and rotates the link", async () => {
    const { email, app } = await ownerWithApp();
    const p = await signedInAt(`/console/apps/${app.app_id}`, email);
    await heading(p, "Console notes");
    expect(await p.locator('[data-fact="slug"]').textContent()).toBe(app.slug);
    expect(await p.locator('[data-fact="version"]').textContent()).toBe("1");
    expect(await p.locator('[data-fact="visibility"]').textContent()).toBe("private");
    expect(await p.locator("#app-description").textContent()).toBe("Notes an agent keeps");
    expect((await texts(p, "#disclosure li")).join("\n")).toContain('Collection "notes": read by member');
    expect(await p.locator("#open-app").getAttribute("href")).toBe(`/authorize?app=${app.slug}`);

    await p.getByLabel("Link: anyone with the share link can open it.").check();
    await p.getByRole("button", { name: "Change visibility" }).click();
    await heading(p, `Share link of ${app.slug}`);
    const first = (await p.locator("#secret").textContent())!;
    expect(first).toMatch(/#k=[0-9a-f]{32}$/);
    const visitor = await newPage();
    await visitor.goto(first);
    await visitor.locator("#content", { hasText: "Console notes page" }).waitFor();

    await p.locator("#back").click();
    await heading(p, "Console notes");
    expect(await p.locator('[data-fact="visibility"]').textContent()).toBe("link");
    await p.getByRole("button", { name: "Make a new share link" }).click();
    const second = (await p.locator("#secret").textContent())!;
    expect(second).not.toBe(first);
    const late = await newPage();
    await late.goto(first);
    await late.locator("#svc-gate-message", { hasText: "not valid" }).waitFor();
    await late.goto(second);
    await late.locator("#content", { hasText: "Console notes page" }).waitFor();

    // Back to private: the flash says so.
    await p.locator("#back").click();
    await p.getByLabel("Private: only you, your members and grant-link holders can open it.").check();
    await p.getByRole("button", { name: "Change visibility" }).click();
    await p.locator("#flash", { hasText: "Private" }).waitFor();
    expect(await p.locator('[data-fact="visibility"]').textContent()).toBe("private");
  });

  it("browses a collection's rows newest first with the author, pages to the end, and searches", async () => {
    const { email, app } = await ownerWithApp(30);
    const p = await signedInAt(`/console/apps/${app.app_id}`, email);
    await p.getByRole("link", { name: "Browse rows of notes" }).click();
    await heading(p, "Rows of notes");
    const cells = () => texts(p, '#rows td[data-field="data"] dd[data-name="text"]');
    const firstPage = await cells();
    expect(firstPage).toHaveLength(25);
    expect(firstPage[0]).toBe("note 29");
    expect(firstPage[24]).toBe("note 5");
    for (const author of await texts(p, '#rows td[data-field="author"]')) expect(author).toMatch(/^agent console-browser$/);

    await p.getByRole("link", { name: "Next page of the rows of notes" }).click();
    await p.locator("#last-page").waitFor();
    expect(await cells()).toEqual([4, 3, 2, 1, 0].map((i) => `note ${i}`));

    await p.getByLabel("Rows containing").fill("note 2");
    await p.getByRole("button", { name: "Search" }).click();
    await p.waitForURL((url) => url.searchParams.get("text") === "note 2");
    expect(await cells()).toEqual([29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 2].map((i) => `note ${i}`));
    await p.locator("#last-page").waitFor();
  });

  it("shows the live feed newest first and pages back to the first change", async () => {
    const { email, key, app } = await ownerWithApp(27);
    expect((await api(`/v1/apps/${app.app_id}/collections/notes`, { key, body: { data: { text: "latest" } } })).status).toBe(201);
    const p = await signedInAt(`/console/apps/${app.app_id}`, email);
    await p.locator("#open-feed").click();
    await heading(p, `Live feed of ${app.slug}`);
    const seqs = async () => (await p.locator("#feed tbody tr").evaluateAll((rows) => rows.map((r) => Number(r.getAttribute("data-seq")))));
    const newest = await seqs();
    expect(newest).toEqual(Array.from({ length: 25 }, (_, i) => 28 - i));
    expect(await p.locator('#feed tr[data-seq="28"] td[data-field="data"] dd[data-name="text"]').textContent()).toBe("latest");
    await p.getByRole("link", { name: "Next page of the feed" }).click();
    await p.locator("#last-page").waitFor();
    expect(await seqs()).toEqual([3, 2, 1]);
  });

  it("moves the app to the trash, restores it, then purges it for good", async () => {
    const { email, key, app } = await ownerWithApp(1);
    const p = await signedInAt(`/console/apps/${app.app_id}`, email);
    await p.locator("#delete-app").click();
    await heading(p, `Delete ${app.slug}?`);
    await p.locator("#confirm-trash").click();
    await heading(p, `${app.slug} is in the trash`);
    await p.locator("#flash", { hasText: "Moved the app to the trash" }).waitFor();
    expect((await api<{ status: string }>(`/v1/apps/${app.app_id}?include_deleted=true`, { key })).body.status).toBe("deleted");

    await p.locator("#restore-app").click();
    await p.locator("#flash", { hasText: `Restored ${app.slug}` }).waitFor();
    expect((await api<{ status: string; row_count: number }>(`/v1/apps/${app.app_id}`, { key })).body).toMatchObject({ status: "active", row_count: 1 });

    await p.locator("#delete-app").click();
    await p.locator("#confirm-trash").click();
    await p.locator("#purge-app").click();
    await heading(p, `Purge ${app.slug} for good?`);
    await p.getByLabel(/Type the app's slug/).fill("something-else");
    await p.locator("#confirm-purge").click();
    await p.locator("#form-error").waitFor();
    await p.getByLabel(/Type the app's slug/).fill(app.slug);
    await p.locator("#confirm-purge").click();
    await heading(p, "Your apps");
    await p.locator("#flash", { hasText: "Purged the app for good" }).waitFor();
    expect((await api(`/v1/apps/${app.app_id}?include_deleted=true`, { key })).status).toBe(404);
  });
});

describe("owner console in Chromium: the account", () => {
  it("shows the profile and usage and toggles product-update email", async () => {
    const { email, app } = await ownerWithApp(3);
    const p = await signedInAt("/console/apps", email);
    await p.locator("#nav-account").click();
    await heading(p, "Your account");
    expect(await p.locator('#profile [data-fact="email"]').textContent()).toBe(email);
    expect(await p.locator(`#usage-per-app tr[data-app-id="${app.app_id}"] td`).first().textContent()).toMatch(/^3 of \d+$/);
    expect(await p.locator("#marketing").getAttribute("data-consent")).toBe("off");
    await p.getByRole("button", { name: "Turn product-update email on" }).click();
    await p.locator("#flash", { hasText: "You will get product-update email." }).waitFor();
    expect(await p.locator("#marketing").getAttribute("data-consent")).toBe("on");
    await p.getByRole("button", { name: "Turn product-update email off" }).click();
    await p.locator("#flash", { hasText: "no longer" }).waitFor();
    expect(await p.locator("#marketing").getAttribute("data-consent")).toBe("off");
    await p.locator("#delete-account").click();
    await heading(p, "Delete your account");
  });

  it("/account/delete opened signed out asks to sign in, then offers to mail the confirmation link", async () => {
    const email = uniqueEmail("leaving");
    const p = await newPage();
    await p.goto(`${relayUrl}/account/delete`);
    await heading(p, "Sign in to delete your account");
    expect(await p.content()).not.toContain("?token=");
    await p.locator("#sign-in-to-delete").click();
    await signInHere(p, email);
    await heading(p, "Delete your account");
    await p.locator("#request-deletion").click();
    await heading(p, "Check your mail");
    expect(await p.locator("#deletion-mailed").textContent()).toContain(email);
  });

  it("the device page shows the code and the asking agent before sign-in, and approves after it", async () => {
    const flow = await api<{ user_code: string; verification_uri_complete: string }>("/v1/device/code", { body: { name: "console-laptop" } });
    expect(flow.status).toBe(200);
    const p = await newPage();
    await p.goto(flow.body.verification_uri_complete);
    await heading(p, "Approve agent access?");
    expect(await p.locator("#device-user-code").textContent()).toBe(flow.body.user_code);
    expect(await p.locator("#device-agent-name").textContent()).toBe("console-laptop");
    expect(await p.locator("#approve").count()).toBe(0);
    await p.locator("#sign-in-to-approve").click();
    await signInHere(p, uniqueEmail("approver"));
    await p.locator("#approve").click();
    await p.locator('#device-result[data-result="approved"]').waitFor();
  });
});
