// Issue 13's "done when", as a person and an agent would do it: an agent deploys a
// photo-sharing app; a visitor uploads a photo from the page's file input; a second
// browser sees its thumbnail (`?w=128`, resized by the relay) appear live; the owner's
// agent shares a one-time capability link that works once and then answers
// attachment_token_invalid; `service attachment list` shows the photo; and the owner
// console's app page counts this week's visits.
import { spawn } from "node:child_process";
import { deflateSync } from "node:zlib";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, ownerWithAgent, relayUrl, signInHere, useBrowser } from "./support";
import { cliPath, root, tempDir } from "../cli/helpers";

const { newPage } = useBrowser();

/** A real 300×200 RGB PNG (a gradient), so the relay has something to make a thumbnail of. */
function gradientPng(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const check = Buffer.alloc(4);
    check.writeUInt32BE(crc(body));
    return Buffer.concat([length, body, check]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    for (let x = 0; x < width; x++) raw.set([Math.round((x / width) * 255), Math.round((y / height) * 255), 128], row + 1 + x * 3);
  }
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", header), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

const PHOTO = gradientPng(300, 200);

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: {
    Photo: {
      type: "object", required: ["image"], additionalProperties: false,
      properties: { image: { type: "string", format: "service-attachment-id" }, caption: { type: "string", maxLength: 200 } },
    },
  },
  "x-service-manifest": {
    app: { name: "Shared photos" },
    collections: {
      photos: { schema: { $ref: "#/$defs/Photo" }, read: ["anyone"], write: ["anyone"], update: ["owner"], delete: ["owner"], anonWriteBudget: { perIpPerDay: 0, perAppPerDay: 0 } },
    },
  },
};

/** Every photo as a 128-pixel-wide thumbnail, live; a file input that uploads one. */
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Shared photos</title></head>
<body><input type="file" id="pick" accept="image/*"><p id="status"></p><ul id="photos"></ul>
<script>
  const svc = window.service;
  const render = () => {
    document.getElementById("photos").replaceChildren(...svc.collections.snapshot("photos").map((row) => {
      const li = document.createElement("li");
      const img = document.createElement("img");
      img.src = "/_svc/attachments/" + row.data.image + "?w=128";
      img.alt = row.data.caption || "";
      img.dataset.id = row.data.image;
      li.append(img);
      return li;
    }));
  };
  svc.collections.on("photos", render);
  document.getElementById("pick").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    try {
      const uploaded = await svc.uploadBlob(file, { collection: "photos" });
      await svc.collections.create("photos", { image: uploaded.id, caption: file.name });
      document.getElementById("status").textContent = "shared " + uploaded.id;
    } catch (err) {
      document.getElementById("status").textContent = "failed " + err.code;
    }
  });
  svc.ready.then(() => { render(); document.body.dataset.ready = "yes"; });
</script></body></html>`;

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
    const deployed = await api<{ app_id: string; url: string }>("/v1/apps", { key, body: { html: PAGE, manifest: MANIFEST, visibility: "public" } });
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
    expect(Buffer.from(await first.arrayBuffer()).equals(PHOTO)).toBe(true);
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
