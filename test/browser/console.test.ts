// The owner console in real Chromium against a real local relay: a person signs in with
// the link from the development outbox, mints a claim code that the real CLI redeems,
// and approves a device request by clicking Approve. Every request stays on loopback.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";

const relayUrl = inject("relayUrl");
const root = fileURLToPath(new URL("../..", import.meta.url));
const cli = path.join(root, "bin", "service");

const relayHost = new URL(relayUrl).hostname;
if (relayHost !== "localhost" && relayHost !== "127.0.0.1") throw new Error(`refusing to test a non-local relay: ${relayUrl}`);

let browser: Browser;
let context: BrowserContext | undefined;
const tempDirs: string[] = [];

/** A client address of its own per test, so the relay's per-IP limiter sees separate callers. */
function fakeIp(): string {
  return `198.18.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;
}

function uniqueEmail(tag: string): string {
  return `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;
}

async function api<T>(ip: string, pathname: string, body?: unknown, key?: string): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = { "content-type": "application/json", "cf-connecting-ip": ip };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${relayUrl}${pathname}`, { method: body === undefined ? "GET" : "POST", headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as T };
}

async function latestSignInLink(email: string): Promise<string> {
  const { body } = await api<{ messages: Array<{ text: string }> }>(fakeIp(), `/__dev/mail?to=${encodeURIComponent(email)}`);
  const link = /https?:\/\/\S+\/v1\/auth\/verify\?token=\S+/.exec(body.messages[0]?.text ?? "")?.[0];
  if (!link) throw new Error(`no sign-in link in the outbox for ${email}`);
  expect(new URL(link).origin).toBe(relayUrl);
  return link;
}

/** A fresh browser context that can reach only the local relay. */
async function newPage(ip: string): Promise<Page> {
  context = await browser.newContext({ extraHTTPHeaders: { "cf-connecting-ip": ip } });
  await context.route((url) => url.origin !== relayUrl, (route) => route.abort());
  return context.newPage();
}

/** Waits until the page (after any navigation) shows this main heading. */
async function heading(page: Page, text: string): Promise<void> {
  await page.locator("main h1", { hasText: text }).waitFor();
}

/** Fills the sign-in form on the current page and follows the mailed link. */
async function signInHere(page: Page, email: string): Promise<void> {
  await page.getByLabel("Email address").fill(email);
  await page.getByRole("button", { name: "Email me a sign-in link" }).click();
  await heading(page, "Check your mail");
  await page.goto(await latestSignInLink(email));
}

function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const { SERVICE_PROFILE: _profile, ...inherited } = process.env;
    execFile(cli, args, { cwd: root, env: { ...inherited, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr: stderr || (error ? error.message : "") });
    });
  });
}

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage"],
  });
});

afterEach(async () => {
  await context?.close();
  context = undefined;
});

afterAll(async () => {
  await browser?.close();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe("owner console in Chromium", () => {
  it("signs in, mints a claim code, and the real CLI claims an agent with it", async () => {
    const ip = fakeIp();
    const registered = await api<{ agent_id: string; api_key: string; key_prefix: string }>(ip, "/v1/register", { name: "browser-claimed" });
    expect(registered.status).toBe(201);
    const { agent_id: agentId, api_key: apiKey } = registered.body;

    const page = await newPage(ip);
    await page.goto(`${relayUrl}/`);
    expect(new URL(page.url()).pathname).toBe("/signin");
    await signInHere(page, uniqueEmail("claim"));
    expect(page.url()).toBe(`${relayUrl}/`);
    await heading(page, "Your console");
    await page.locator("#no-agents").waitFor();

    await page.getByRole("button", { name: "Mint a claim code" }).click();
    await heading(page, "Your claim code");
    const code = (await page.locator("#claim-code").textContent())?.trim() ?? "";
    expect(code).toMatch(/^cc_/);
    expect(await page.locator("#claim-command").textContent()).toBe(`service agent claim ${code}`);

    const configHome = mkdtempSync(path.join(tmpdir(), "console-cli-"));
    tempDirs.push(configHome);
    const run = await runCli(["agent", "claim", code], { SERVICE_URL: relayUrl, SERVICE_API_KEY: apiKey, XDG_CONFIG_HOME: configHome });
    expect(run.code, `service agent claim failed:\n${run.stderr}`).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true });

    const keys = await api<{ agent_id: string }>(ip, "/v1/keys", undefined, apiKey);
    expect(keys.status).toBe(200);
    expect(keys.body.agent_id).toBe(agentId);

    await page.goto(`${relayUrl}/`);
    const row = page.locator(`#agent-${agentId}`);
    await row.waitFor();
    expect(await row.textContent()).toContain("browser-claimed");
    expect(await row.locator('[data-field="status"]').textContent()).toBe("active");
    expect(await row.locator('[data-field="keys"]').textContent()).toContain(registered.body.key_prefix);
  });

  it("approves a device request: the agent's next poll receives its key", async () => {
    const ip = fakeIp();
    const started = await api<{ device_code: string; user_code: string; verification_uri_complete: string }>(ip, "/v1/device/code", { name: "browser-device" });
    expect(started.status).toBe(200);
    const flow = started.body;
    expect(new URL(flow.verification_uri_complete).origin).toBe(relayUrl);

    const page = await newPage(ip);
    // Signed out, the page shows the request; signing in comes back to the same request.
    await page.goto(flow.verification_uri_complete);
    await heading(page, "Approve agent access?");
    await page.getByRole("link", { name: "Sign in to approve" }).click();
    expect(new URL(page.url()).pathname).toBe("/signin");
    await signInHere(page, uniqueEmail("device"));
    expect(page.url()).toBe(flow.verification_uri_complete);

    await heading(page, "Approve agent access?");
    expect(await page.locator("#device-agent-name").textContent()).toBe("browser-device");
    expect(await page.locator("#device-user-code").textContent()).toBe(flow.user_code);
    await page.getByRole("button", { name: "Approve" }).click();
    await heading(page, "Agent approved");
    expect(await page.locator("#device-result").getAttribute("data-result")).toBe("approved");

    const token = await api<{ agent_id: string; agent_key: string; name: string }>(ip, "/v1/device/token", { device_code: flow.device_code });
    expect(token.status).toBe(200);
    expect(token.body.agent_key).toMatch(/^svc_/);
    expect(token.body.name).toBe("browser-device");

    await page.goto(`${relayUrl}/`);
    const row = page.locator(`#agent-${token.body.agent_id}`);
    await row.waitFor();
    expect(await row.textContent()).toContain("browser-device");

    await page.getByRole("button", { name: "Sign out" }).click();
    await heading(page, "Sign in");
    expect(await page.locator("#flash").textContent()).toBe("You are signed out.");
    await page.goto(`${relayUrl}/`);
    expect(new URL(page.url()).pathname).toBe("/signin");
  });
});
