// `service deploy --asset <local>=<app-path>` as a real process against the real test
// relay: a 1.5 MB file goes through presign → PUT → confirm and is deployed as
// `{ path, attachment_id }`, a small one goes inline; both are then served on the app's
// origin byte for byte, and a Range request on the large one answers 206. The same
// uploader serves `service attachment upload` for a large file.
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appPackage, claimedCliAgent, cleanupTempHomes, fakeIp, ok, relayUrl, tempDir, type CliAgent } from "./helpers.ts";

const MANIFEST = { "x-service-manifest": { app: { name: "Media" }, collections: {} } };

/** An MP4-looking file of `size` bytes: an `ftyp` box, then noise. */
function mp4(size: number): Buffer {
  const bytes = randomBytes(size);
  Buffer.from([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0, 0, 2, 0, 0x69, 0x73, 0x6f, 0x6d, 0x69, 0x73, 0x6f, 0x32]).copy(bytes, 0);
  return bytes;
}

/** GET on the app's origin (the Host header names the app), answering status, headers and body. */
function appGet(slug: string, appPath: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const base = new URL(relayUrl());
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, path: appPath, headers: { host: `${slug}.localhost:${base.port}`, "cf-connecting-ip": fakeIp(), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

afterAll(() => {
  cleanupTempHomes();
});

describe("service deploy --asset", { timeout: 120_000 }, () => {
  let me: CliAgent;
  beforeAll(async () => {
    me = await claimedCliAgent("cli-deploy-assets");
  });

  it("uploads a 1.5 MB file through presign and inlines a small one; both are served byte-identical", async () => {
    const dir = appPackage(MANIFEST, "media");
    const files = tempDir();
    const large = mp4(1_500_000);
    const small = Buffer.from("a small note\n");
    writeFileSync(path.join(files, "clip.mp4"), large);
    writeFileSync(path.join(files, "note.txt"), small);
    const checked = ok(await me.cli(["deploy", dir, "--check", "--asset", `${path.join(files, "clip.mp4")}=media/clip.mp4`]));
    expect(checked.stderr).toContain("--check does not upload media/clip.mp4");
    const run = ok(await me.cli(["deploy", dir, "--visibility", "public", "--asset", `${path.join(files, "clip.mp4")}=media/clip.mp4`, "--asset", `${path.join(files, "note.txt")}=note.txt`]));
    expect(run.stderr).not.toMatch(/%/);
    const created = JSON.parse(run.stdout) as { slug: string };
    // The large file became an attachment of the agent (the small one did not).
    const listed = await fetch(`${relayUrl()}/v1/attachments`, { headers: { authorization: `Bearer ${me.key}`, "cf-connecting-ip": fakeIp() } });
    const sizes = ((await listed.json()) as { items: Array<{ size: number }> }).items.map((item) => item.size);
    expect(sizes).toContain(large.byteLength);
    expect(sizes).not.toContain(small.byteLength);

    const clip = await appGet(created.slug, "/media/clip.mp4");
    expect(clip.status).toBe(200);
    expect(clip.headers["content-type"]).toBe("video/mp4");
    expect(clip.body.equals(large)).toBe(true);
    const note = await appGet(created.slug, "/note.txt");
    expect(note.status).toBe(200);
    expect(note.body.equals(small)).toBe(true);
    const part = await appGet(created.slug, "/media/clip.mp4", { range: "bytes=1000-1999" });
    expect(part.status).toBe(206);
    expect(part.body.equals(large.subarray(1000, 2000))).toBe(true);

    // A redeploy uploads it again scoped to the app.
    const again = ok(await me.cli(["deploy", dir, "--app", created.slug, "--asset", `${path.join(files, "clip.mp4")}=media/again.mp4`]));
    expect(JSON.parse(again.stdout).version).toBe(2);
    expect((await appGet(created.slug, "/media/again.mp4")).body.equals(large)).toBe(true);
  });

  it("attachment upload sends a large file through presign too", async () => {
    const files = tempDir();
    const large = mp4(1_200_000);
    writeFileSync(path.join(files, "big.mp4"), large);
    const ref = JSON.parse(ok(await me.cli(["attachment", "upload", "--file", path.join(files, "big.mp4")])).stdout) as { status: string; size: number; mime: string };
    expect(ref).toMatchObject({ status: "ready", size: large.byteLength, mime: "video/mp4" });
  });
});
