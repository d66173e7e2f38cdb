// What every Chromium test shares: the local relay's URL (refusing anything but
// loopback), calls to its API from a fresh fake address each, sign-in through the dev
// outbox, an owner with a claimed agent, and a browser whose contexts can only reach the
// relay and its app origins.
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect, inject } from "vitest";

export const relayUrl = inject("relayUrl");
export const relay = new URL(relayUrl);
if (relay.hostname !== "localhost" && relay.hostname !== "127.0.0.1") throw new Error(`refusing to test a non-local relay: ${relayUrl}`);

export const SIGN_IN_LINK = /https?:\/\/\S+\/v1\/auth\/verify\?token=\S+/;

export function fakeIp(): string {
  return `198.${18 + Math.floor(Math.random() * 2)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;
}

export function uniqueEmail(tag: string): string {
  return `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;
}

export interface Api<T> { status: number; body: T }

export async function api<T>(pathname: string, init: { method?: string; body?: unknown; key?: string; cookie?: string; ip?: string } = {}): Promise<Api<T>> {
  const headers: Record<string, string> = { "cf-connecting-ip": init.ip ?? fakeIp() };
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

/** The newest link matching `pattern` in the mail the dev outbox holds for `email`. */
export async function mailedLink(email: string, pattern: RegExp = SIGN_IN_LINK): Promise<string> {
  const { body } = await api<{ messages: Array<{ text: string }> }>(`/__dev/mail?to=${encodeURIComponent(email)}`);
  const link = pattern.exec(body.messages[0]?.text ?? "")?.[0];
  if (!link) throw new Error(`no link matching ${pattern} in the outbox for ${email}`);
  return link;
}

export const signInLink = (email: string) => mailedLink(email, SIGN_IN_LINK);

/** A human signed in over HTTP, with an agent registered and claimed by them. */
export async function ownerWithAgent(tag = "owner"): Promise<{ email: string; key: string }> {
  const email = uniqueEmail(tag);
  expect((await api("/v1/auth/request-link", { body: { email } })).status).toBe(200);
  const verify = await fetch(await signInLink(email), { redirect: "manual" });
  const cookie = /relay_session=[^;]+/.exec(verify.headers.get("set-cookie") ?? "")?.[0];
  if (!cookie) throw new Error("no session cookie from the sign-in link");
  const code = await api<{ code: string }>("/v1/self/claim-codes", { method: "POST", cookie });
  expect(code.status).toBe(201);
  const agent = await api<{ api_key: string }>("/v1/register", { body: { name: `${tag}-browser` } });
  expect(agent.status).toBe(201);
  expect((await api("/v1/agents/claim", { body: { code: code.body.code }, key: agent.body.api_key })).status).toBe(200);
  return { email, key: agent.body.api_key };
}

/** On the relay's sign-in page: asks for a link and follows it from the outbox. */
export async function signInHere(p: Page, email: string): Promise<void> {
  await p.waitForURL((url) => url.origin === relayUrl && url.pathname === "/signin");
  await p.getByLabel("Email address").fill(email);
  await p.getByRole("button", { name: "Email me a sign-in link" }).click();
  await p.locator("main h1", { hasText: "Check your mail" }).waitFor();
  await p.goto(await signInLink(email));
}

/**
 * Launches Chromium for the file's tests and closes every context after each test.
 * `newPage` opens a fresh context (its own fake address) that can reach only the relay,
 * its app origins and any `alsoAllowed` origins.
 */
export function useBrowser(): { newPage(alsoAllowed?: string[]): Promise<Page>; browser(): Browser } {
  let browser: Browser;
  const contexts: BrowserContext[] = [];
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
  return {
    browser: () => browser,
    async newPage(alsoAllowed: string[] = []) {
      const context = await browser.newContext({ extraHTTPHeaders: { "cf-connecting-ip": fakeIp() } });
      contexts.push(context);
      await context.route((url) => {
        const local = url.port === relay.port && (url.hostname === relay.hostname || url.hostname.endsWith(".localhost"));
        return !local && !alsoAllowed.includes(url.origin);
      }, (route) => route.abort());
      return context.newPage();
    },
  };
}
