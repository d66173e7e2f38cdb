// Issue 13's "done when", as a person and an agent would do it: an agent deploys a
// photo-sharing app; a visitor uploads a photo from the page's file input; a second
// browser sees its thumbnail (`?w=128`, resized by the relay) appear live; the owner's
// agent shares a one-time capability link that works once and then answers
// attachment_token_invalid; `service attachment list` shows the photo; and the owner
// console's app page counts this week's visits.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, ownerWithAgent, relayUrl, signInHere, useBrowser } from "./support";
import { rgbPng } from "./png";
import { photoManifest, photoPage } from "./photo-app";
import { cliPath, root, tempDir } from "../cli/helpers";

const { newPage } = useBrowser();

/** A real 300×200 gradient, so the relay has something to make a thumbnail of. */
const PHOTO = rgbPng(300, 200, (x, y) => [Math.round((x / 300) * 255), Math.round((y / 200) * 255), 128]);

async function opened(url: string): Promise<Page> {
  const p = await newPage();
  await p.goto(url);
  await p.locator("body[data-ready=yes]").waitFor();
  return p;
}

/** `service <args>` as a real process with the agent's key; its stdout. */
function service(key: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const home = tempDir();
    const child = spawn(cliPath, args, { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: home, XDG_CONFIG_HOME: home, SERVICE_URL: relayUrl, SERVICE_API_KEY: key } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => { stdout += chunk; });
    child.stderr.on("data", (chunk) => { stderr += chunk; });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the photo-sharing app of issue 13, end to end", () => {
  it("a page upload shows as a live thumbnail elsewhere, a one-time link works once, the CLI lists it, the console counts the visits", async () => {
    const { email, key } = await ownerWithAgent("photos-done");
    const deployed = await api<{ app_id: string; url: string }>("/v1/apps", { key, body: { html: photoPage("Shared photos", 128), manifest: photoManifest("Shared photos"), visibility: "public" } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
    const app = deployed.body;

    // A visitor shares a photo; a second browser sees its thumbnail arrive, 128 pixels wide.
    const viewer = await opened(app.url);
    const sharer = await opened(app.url);
    await sharer.setInputFiles("#pick", { name: "sunset.png", mimeType: "image/png", buffer: PHOTO });
    const status = await sharer.locator("#status", { hasText: /^(shared|failed) / }).textContent();
    expect(status).toMatch(/^shared att_/);
    const attachmentId = status!.slice("shared ".length);
    await viewer.locator(`#photos img[data-id="${attachmentId}"]`).waitFor();
    await viewer.waitForFunction((id) => {
      const img = document.querySelector<HTMLImageElement>(`#photos img[data-id="${id}"]`);
      return img !== null && img.complete && img.naturalWidth > 0;
    }, attachmentId, { timeout: 15_000 });
    const size = await viewer.evaluate((id) => {
      const img = document.querySelector<HTMLImageElement>(`#photos img[data-id="${id}"]`)!;
      return { width: img.naturalWidth, height: img.naturalHeight };
    }, attachmentId);
    expect(size.width).toBe(128);
    expect([85, 86]).toContain(size.height);

    // The owner's agent shares a one-time link: it works once, then it is spent.
    const minted = await api<{ url: string; once: boolean }>(`/v1/attachments/${attachmentId}/tokens`, { key, body: { once: true } });
    expect(minted.status, JSON.stringify(minted.body)).toBe(201);
    expect(minted.body.once).toBe(true);
    const first = await fetch(minted.body.url);
    expect(first.status).toBe(200);
    // It serves what the relay keeps: the photo re-encoded without metadata, the same 300×200 PNG.
    const served = Buffer.from(await first.arrayBuffer());
    const kept = await api<{ size: number; sha256: string; width: number; height: number }>(`/v1/attachments/${attachmentId}/metadata`, { key });
    expect(kept.body).toMatchObject({ size: served.length, sha256: createHash("sha256").update(served).digest("hex"), width: 300, height: 200 });
    expect([served.readUInt32BE(16), served.readUInt32BE(20)]).toEqual([300, 200]);
    const again = await fetch(minted.body.url, { headers: { accept: "application/json" } });
    expect(again.status).toBe(401);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("attachment_token_invalid");

    // `service attachment list` shows the photo.
    const listed = await service(key, ["attachment", "list"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(attachmentId);

    // The owner console's app page counts this week's visits (the two page loads at least).
    const consolePage = await newPage();
    await consolePage.goto(`${relayUrl}/console/apps/${app.app_id}`);
    await signInHere(consolePage, email);
    await consolePage.waitForURL(`${relayUrl}/console/apps/${app.app_id}`);
    const total = await consolePage.locator("#visits-total").textContent();
    const views = Number(/^(\d+) page views/.exec(total ?? "")?.[1]);
    expect(views, total ?? "").toBeGreaterThanOrEqual(2);
    await consolePage.locator("#visits-chart").waitFor();
  }, 120_000);
});
