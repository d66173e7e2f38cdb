// The page script's files in real Chromium against a real local relay (WIRE §4.2, §4.3):
// a visitor picks a photo in a file input, `uploadBlob` stores it through
// /_svc/attachments (allowed because the photos collection admits anyone's writes) and
// the page writes a row referencing it; a second viewer in another browser sees the row
// arrive live, shows the photo from /_svc/attachments/<id>, reads the stored bytes (the
// photo re-encoded without metadata: still a 1×1 PNG) with `downloadBlob` and saves it
// with `saveBlob`. Without a collection that admits anyone, a
// visitor's upload is refused with upload_forbidden.
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { api, ownerWithAgent, useBrowser } from "./support";
import { photoManifest, photoPage } from "./photo-app";

const MANIFEST = photoManifest("Photo wall");
const PAGE = photoPage("Photo wall");

const { newPage } = useBrowser();

/** 1×1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==", "base64");

type Win = Window & {
  uploaded: { id: string; mime: string; size: number; filename: string | null };
  service: {
    uploadBlob(file: Blob, opts?: { filename?: string; collection?: string }): Promise<{ id: string }>;
    downloadBlob(id: string): Promise<Uint8Array>;
    saveBlob(id: string, filename?: string): Promise<void>;
  };
};

async function opened(url: string): Promise<Page> {
  const p = await newPage();
  await p.goto(url);
  await p.locator("body[data-ready=yes]").waitFor();
  return p;
}

describe("uploadBlob, downloadBlob, saveBlob", () => {
  it("a visitor uploads a photo from a file input and a second viewer sees and downloads it", async () => {
    const { key } = await ownerWithAgent("photos");
    const deployed = await api<{ app_id: string; url: string }>("/v1/apps", { key, body: { html: PAGE, manifest: MANIFEST, visibility: "public" } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
    const viewer = await opened(deployed.body.url);
    const uploader = await opened(deployed.body.url);

    await uploader.setInputFiles("#pick", { name: "dot.png", mimeType: "image/png", buffer: PNG });
    await uploader.locator("#status", { hasText: "shared att_" }).waitFor();
    const uploaded = await uploader.evaluate(() => (window as unknown as Win).uploaded);
    expect(uploaded).toMatchObject({ mime: "image/png", filename: "dot.png" });

    // The second viewer gets the row live and shows the photo from the app's origin.
    const image = viewer.locator(`#photos img[data-id="${uploaded.id}"]`);
    await image.waitFor();
    await viewer.waitForFunction((id) => {
      const img = document.querySelector<HTMLImageElement>(`#photos img[data-id="${id}"]`);
      return img !== null && img.complete && img.naturalWidth === 1;
    }, uploaded.id);
    const bytes = await viewer.evaluate(async (id) => [...await (window as unknown as Win).service.downloadBlob(id)], uploaded.id);
    const served = Buffer.from(bytes);
    expect(served.length).toBe(uploaded.size);
    expect(served.subarray(0, 8).equals(PNG.subarray(0, 8))).toBe(true);
    expect([served.readUInt32BE(16), served.readUInt32BE(20)]).toEqual([1, 1]);
    const [download] = await Promise.all([viewer.waitForEvent("download"), viewer.evaluate((id) => (window as unknown as Win).service.saveBlob(id, "saved.png"), uploaded.id)]);
    expect(download.suggestedFilename()).toBe("saved.png");

    // The agent sees the row the page wrote, referencing the attachment.
    const rows = await api<{ rows: Array<{ data: { image: string } }> }>(`/v1/apps/${deployed.body.app_id}/collections/photos`, { key });
    expect(rows.body.rows.map((row) => row.data.image)).toEqual([uploaded.id]);
  });

  it("a visitor's upload without an open collection is refused, and an unknown id rejects", async () => {
    const { key } = await ownerWithAgent("photos-refused");
    const deployed = await api<{ url: string }>("/v1/apps", { key, body: { html: PAGE, manifest: MANIFEST, visibility: "public" } });
    const p = await opened(deployed.body.url);
    const refused = await p.evaluate(() => (window as unknown as Win).service.uploadBlob(new Blob(["x"], { type: "image/png" })).then(() => "stored", (err: { code: string }) => err.code));
    expect(refused).toBe("upload_forbidden");
    const missing = await p.evaluate(() => (window as unknown as Win).service.downloadBlob("att_nothinghere00").then(() => "found", (err: { code: string }) => err.code));
    expect(missing).toBe("attachment_not_found");
  });
});
