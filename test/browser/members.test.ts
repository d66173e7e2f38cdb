// Members in real Chromium against a real local relay: the owner invites a friend by
// email from the console; the friend opens the invitation from the development outbox,
// signs in with that address, accepts, and is sent through /authorize into the private
// app, which opens for them as a member and shows the rows members may read (the page's
// `service.collections.snapshot`). The owner removes the friend in the console, and the
// friend's next load of the app shows the sign-in gate again. Every request stays on
// loopback.

import { describe, expect, it } from "vitest";
import { api, mailedLink, ownerWithAgent, relayUrl, SIGN_IN_LINK, signInHere, uniqueEmail, useBrowser } from "./support";

const { newPage } = useBrowser();

const INVITE_LINK = /https?:\/\/\S+\/invite\?token=inv_[0-9a-f]{32}/;

/** A human (signed in outside the browser) with a claimed agent. */
const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: { Note: { type: "object", properties: { text: { type: "string", maxLength: 200 } }, required: ["text"] } },
  "x-service-manifest": {
    app: { name: "Team notes" },
    roles: { writer: { label: "Writer" } },
    collections: { notes: { schema: { $ref: "#/$defs/Note" }, read: ["member"], write: ["owner", "writer"], delete: ["owner"] } },
  },
};

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Team notes</title></head>
<body><h1 id="content">Team notes page</h1><ul id="rows"></ul>
<script>
  window.service.ready.then(() => {
    document.getElementById("rows").textContent = window.service.collections.snapshot("notes").map((r) => r.data.text).join("|");
    document.body.dataset.ready = window.service.session.kind;
  });
</script></body></html>`;

describe("members in Chromium", () => {
  it("the owner invites a friend, the friend joins through the mailed link and uses the private app, then loses it on removal", async () => {
    const { email: ownerEmail, key } = await ownerWithAgent();
    const deployed = await api<{ app_id: string; slug: string; url: string }>("/v1/apps", { key, body: { html: PAGE, manifest: MANIFEST, visibility: "private" } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
    const app = deployed.body;
    const row = await api(`/v1/apps/${app.app_id}/collections/notes`, { key, body: { data: { text: "hello team" } } });
    expect(row.status).toBeLessThan(300);

    // The owner invites the friend from the console.
    const friendEmail = uniqueEmail("friend");
    const owner = await newPage();
    await owner.goto(`${relayUrl}/console/apps`);
    await signInHere(owner, ownerEmail);
    await owner.waitForURL(`${relayUrl}/console/apps`);
    await owner.getByRole("link", { name: `Members of ${app.slug}` }).click();
    await owner.getByLabel("Email address").fill(friendEmail);
    await owner.getByLabel("writer").check();
    await owner.getByRole("button", { name: "Add", exact: true }).click();
    await owner.locator("#flash", { hasText: `Invitation mailed to ${friendEmail}` }).waitFor();
    expect(await owner.locator(`tr[data-email="${friendEmail}"]`).textContent()).toContain("writer");

    // The friend opens the invitation from the outbox and signs in with the invited address.
    const friend = await newPage();
    await friend.goto(await mailedLink(friendEmail, INVITE_LINK));
    expect(await friend.locator("#invite-summary").textContent()).toContain("Team notes");
    await friend.locator("#invite-sign-in").click();
    await friend.locator("main h1", { hasText: "Check your mail" }).waitFor();
    await friend.goto(await mailedLink(friendEmail, SIGN_IN_LINK));
    // Back on the invitation, now signed in: accepting lands on the app itself, through /authorize.
    await friend.locator("#accept-invite").click();
    await friend.locator("#content", { hasText: "Team notes page" }).waitFor();
    expect(new URL(friend.url()).origin).toBe(new URL(app.url).origin);
    await friend.locator('body[data-ready="member"]').waitFor();
    expect(await friend.locator("#rows").textContent()).toBe("hello team");
    expect(await friend.evaluate(() => (window as unknown as { service: { session: { humanId: string | null } } }).service.session.humanId)).toMatch(/\S/);

    // The friend's console lists the app as joined.
    await friend.goto(`${relayUrl}/console/apps`);
    expect(await friend.locator(`#joined-apps tr[data-role="member"]`).textContent()).toContain(app.slug);

    // The owner sees the new member and removes them.
    await owner.reload();
    const memberRow = owner.locator("tr[data-role='member']");
    expect(await memberRow.locator("th").textContent()).toBe(friendEmail);
    await memberRow.getByRole("button", { name: `Remove ${friendEmail}` }).click();
    await owner.locator("#flash", { hasText: "Removed the member" }).waitFor();
    expect(await owner.locator("tr[data-role='member']").count()).toBe(0);

    // The friend's next load is refused: the gate is back and the page body never arrives.
    await friend.goto(app.url);
    await friend.locator("#svc-sign-in").waitFor();
    expect(await friend.content()).not.toContain("Team notes page");
    expect(await friend.content()).not.toContain("hello team");
  });
});
