// Members in real Chromium against a real local relay: the owner invites a friend by
// email from the console; the friend opens the invitation from the development outbox,
// signs in with that address, accepts, and is sent through /authorize into the private
// app, which opens for them as a member and shows the rows members may read (the page's
// `service.collections.snapshot`). The owner removes the friend in the console, and the
// friend's next load of the app shows the sign-in gate again. Every request stays on
// loopback.
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";

const relayUrl = inject("relayUrl");
const relay = new URL(relayUrl);
if (relay.hostname !== "localhost" && relay.hostname !== "127.0.0.1") throw new Error(`refusing to test a non-local relay: ${relayUrl}`);

let browser: Browser;
const contexts: BrowserContext[] = [];

function fakeIp(): string {
  return `198.18.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;
}

function uniqueEmail(tag: string): string {
  return `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;
}

interface Api<T> { status: number; body: T }

async function api<T>(pathname: string, init: { method?: string; body?: unknown; key?: string; cookie?: string } = {}): Promise<Api<T>> {
  const headers: Record<string, string> = { "cf-connecting-ip": fakeIp() };
  if (init.body !== undefined) headers["content-type"] = "application/json";
  if (init.key) headers.authorization = `Bearer ${init.key}`;
  if (init.cookie) {
    headers.cookie = init.cookie;
    headers.origin = relayUrl;
  }
  const res = await fetch(`${relayUrl}${pathname}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"), headers, redirect: "manual",
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** The first link in the newest mail to `email` whose URL matches `pattern`. */
async function mailedLink(email: string, pattern: RegExp): Promise<string> {
  const { body } = await api<{ messages: Array<{ text: string }> }>(`/__dev/mail?to=${encodeURIComponent(email)}`);
  for (const message of body.messages) {
    const link = pattern.exec(message.text)?.[0];
    if (link) return link;
  }
  throw new Error(`no link matching ${pattern} in the outbox for ${email}`);
}

const SIGN_IN_LINK = /https?:\/\/\S+\/v1\/auth\/verify\?token=\S+/;
const INVITE_LINK = /https?:\/\/\S+\/invite\?token=inv_[0-9a-f]{32}/;

/** A human (signed in outside the browser) with a claimed agent. */
async function ownerWithAgent(): Promise<{ email: string; key: string }> {
  const email = uniqueEmail("owner");
  expect((await api("/v1/auth/request-link", { body: { email } })).status).toBe(200);
  const verify = await fetch(await mailedLink(email, SIGN_IN_LINK), { redirect: "manual" });
  const cookie = /relay_session=[^;]+/.exec(verify.headers.get("set-cookie") ?? "")?.[0];
  if (!cookie) throw new Error("no session cookie from the sign-in link");
  const code = await api<{ code: string }>("/v1/self/claim-codes", { method: "POST", cookie });
  expect(code.status).toBe(201);
  const agent = await api<{ api_key: string }>("/v1/register", { body: { name: "members-browser" } });
  expect(agent.status).toBe(201);
  expect((await api("/v1/agents/claim", { body: { code: code.body.code }, key: agent.body.api_key })).status).toBe(200);
  return { email, key: agent.body.api_key };
}

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

/** A fresh browser that can reach only the local relay and its app origins. */
async function newPage(): Promise<Page> {
  const context = await browser.newContext({ extraHTTPHeaders: { "cf-connecting-ip": fakeIp() } });
  contexts.push(context);
  await context.route((url) => !(url.port === relay.port && (url.hostname === relay.hostname || url.hostname.endsWith(".localhost"))), (route) => route.abort());
  return context.newPage();
}

/** Signs in on the relay's sign-in page the browser is on, through the mailed link. */
async function signInHere(p: Page, email: string): Promise<void> {
  await p.waitForURL((url) => url.origin === relayUrl && url.pathname === "/signin");
  await p.getByLabel("Email address").fill(email);
  await p.getByRole("button", { name: "Email me a sign-in link" }).click();
  await p.locator("main h1", { hasText: "Check your mail" }).waitFor();
  await p.goto(await mailedLink(email, SIGN_IN_LINK));
}

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage"],
  });
});

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

afterAll(async () => {
  await browser?.close();
});

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
    // Back on the invitation, now signed in: accept, then open the app through /authorize.
    await friend.locator("#accept-invite").click();
    await friend.locator("#open-joined").click();
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
