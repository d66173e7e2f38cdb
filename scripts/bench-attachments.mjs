// `npm run bench` section (i): attachments, each beside a bare baseline in the same run.
//   - upload throughput (MB/s) of a 1 MB and a 10 MB file through each of the relay's
//     doors: inline base64 JSON, multipart, and presign → PUT → confirm (three requests,
//     timed together). The file is an MP4 (random bytes behind an `ftyp` box): sniffed,
//     capped, hashed and counted like any upload, but not an image, so nothing is
//     re-encoded. Beside it the baseline Worker writing the same bytes to R2 as they come
//     (PUT /r2/<key>: no auth, sniffing, hashing or D1 row). Downloads of the same files
//     beside the baseline's bare R2 read.
//   - a JPEG photo of about 1 MB uploaded inline: what re-encoding it without metadata
//     (Images binding) adds to the same-size MP4's inline upload.
//   - `?w=256` thumbnails of such photos: the first hit (read, resize through the Images
//     binding, write the variant) on a fresh photo each time, and cached hits; beside the
//     baseline's bare R2 → Images → R2 (first) and a bare R2 read of its result (cached).
// Sequential requests (one at a time), median of `runs` timings per row. Printed, never
// asserted. The helpers (HTTP client, table, percentiles) are bench.mjs's own, handed in.
import { createHash, randomBytes } from "node:crypto";

const MB = 1_000_000;
const FTYP = [0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0, 0, 2, 0, 0x69, 0x73, 0x6f, 0x6d, 0x69, 0x73, 0x6f, 0x32];
const THUMBNAIL_WIDTH = 256;

/** `size` bytes that sniff as video/mp4. */
function mp4(size) {
  const bytes = randomBytes(size);
  Buffer.from(FTYP).copy(bytes, 0);
  return bytes;
}

/**
 * A 1600×1200 JPEG photo of about 1 MB (a gradient with grain), made with the sharp
 * package wrangler's local Images binding already installs; null when it cannot load.
 */
async function photo(seed) {
  let sharp;
  try {
    ({ default: sharp } = await import("sharp"));
  } catch {
    return null;
  }
  const width = 1600;
  const height = 1200;
  const raw = Buffer.alloc(width * height * 3);
  let state = seed * 2654435761 >>> 0;
  for (let i = 0; i < raw.length; i++) {
    state = (state * 1664525 + 1013904223) >>> 0;
    const pixel = Math.floor(i / 3);
    const base = i % 3 === 0 ? (pixel % width) / width : i % 3 === 1 ? Math.floor(pixel / width) / height : 0.5;
    raw[i] = Math.max(0, Math.min(255, Math.round(base * 255 + ((state >>> 24) % 48) - 24)));
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
}

async function timed(fn) {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

async function multipartBody(bytes, filename, mime) {
  const form = new FormData();
  form.set("file", new File([bytes], filename, { type: mime }));
  const encoded = new Request("http://localhost/", { method: "POST", body: form });
  return { raw: Buffer.from(await encoded.arrayBuffer()), type: encoded.headers.get("content-type") };
}

export async function benchAttachments(h, relay, app, baseline, { runs, sizes }) {
  const { request, expectStatus, percentile, table } = h;
  const median = (xs) => percentile(xs, 50);
  const rate = (size, ms) => `${((size / MB) / (ms / 1000)).toFixed(1)} MB/s`;
  const auth = app.auth;
  let serial = 0;
  const baselineKey = (tag) => `bench-${tag}-${process.pid}-${serial++}`;

  const doors = {
    inline: async (bytes, mime) => expectStatus(await request({ port: relay.port, method: "POST", path: "/v1/attachments", headers: auth, json: { content_base64: bytes.toString("base64"), filename: "clip.mp4", mime } }), 201, "inline upload").json(),
    multipart: async (bytes, mime) => {
      const form = await multipartBody(bytes, "clip.mp4", mime);
      return expectStatus(await request({ port: relay.port, method: "POST", path: "/v1/attachments", headers: { ...auth, "content-type": form.type }, raw: form.raw }), 201, "multipart upload").json();
    },
    presign: async (bytes, mime, sha256) => {
      const reserved = expectStatus(await request({ port: relay.port, method: "POST", path: "/v1/attachments/presign", headers: auth, json: { mime, size: bytes.length, sha256, filename: "clip.mp4" } }), 201, "presign").json();
      const target = new URL(reserved.upload_url);
      expectStatus(await request({ port: relay.port, method: "PUT", path: target.pathname + target.search, headers: { "content-type": mime, "cf-connecting-ip": auth["cf-connecting-ip"] }, raw: bytes }), 200, "presigned PUT");
      return expectStatus(await request({ port: relay.port, method: "POST", path: `/v1/attachments/${reserved.attachment_id}/confirm`, headers: auth }), 200, "confirm").json();
    },
  };
  const bare = async (bytes) => expectStatus(await request({ port: baseline.port, method: "PUT", path: `/r2/${baselineKey("file")}`, raw: bytes }), 201, "baseline R2 put").json().key;

  console.log(`\n(i) attachments: ${runs} sequential runs per row, median; files of ${sizes.map((s) => `${s / MB} MB`).join(" and ")} (video/mp4, not re-encoded)`);
  const rows = [["size", "target", "upload median", "upload MB/s", "download median", "download MB/s"]];
  for (const size of sizes) {
    const samples = Array.from({ length: runs }, () => mp4(size));
    const hashes = samples.map((bytes) => createHash("sha256").update(bytes).digest("hex"));
    // One untimed upload per door first: module load, first R2 and D1 writes.
    const warm = mp4(1000);
    for (const door of Object.values(doors)) await door(warm, "video/mp4", createHash("sha256").update(warm).digest("hex"));
    await bare(mp4(1000));
    const relayDownloads = [];
    for (const [name, door] of Object.entries(doors)) {
      const times = [];
      for (let i = 0; i < runs; i++) {
        let ref;
        times.push(await timed(async () => { ref = await door(samples[i], "video/mp4", hashes[i]); }));
        if (ref.size !== size) throw new Error(`the ${name} upload stored ${ref.size} bytes, not ${size}`);
        if (name === "inline") relayDownloads.push(ref.attachment_id);
      }
      rows.push([`${size / MB} MB`, `relay ${name}${name === "presign" ? " (3 requests)" : ""}`, `${median(times).toFixed(1)} ms`, rate(size, median(times)), "", ""]);
    }
    const downloads = [];
    for (const id of relayDownloads) {
      downloads.push(await timed(async () => {
        const res = expectStatus(await request({ port: relay.port, path: `/v1/attachments/${id}`, headers: auth }), 200, "download");
        if (res.bytes.length !== size) throw new Error(`the download was ${res.bytes.length} bytes, not ${size}`);
      }));
    }
    rows[rows.length - 3][4] = `${median(downloads).toFixed(1)} ms`;
    rows[rows.length - 3][5] = rate(size, median(downloads));
    const bareUploads = [];
    const bareKeys = [];
    for (const bytes of samples) bareUploads.push(await timed(async () => { bareKeys.push(await bare(bytes)); }));
    const bareDownloads = [];
    for (const key of bareKeys) {
      bareDownloads.push(await timed(async () => {
        const res = expectStatus(await request({ port: baseline.port, path: `/r2/${key}` }), 200, "baseline R2 get");
        if (res.bytes.length !== size) throw new Error(`the baseline read ${res.bytes.length} bytes, not ${size}`);
      }));
    }
    rows.push([`${size / MB} MB`, "bare Worker → R2 put / get", `${median(bareUploads).toFixed(1)} ms`, rate(size, median(bareUploads)), `${median(bareDownloads).toFixed(1)} ms`, rate(size, median(bareDownloads))]);
  }
  table(rows);
  console.log("  download figures on the relay are of the inline uploads (GET /v1/attachments/<id>)");

  const photos = [];
  for (let i = 0; i < runs; i++) {
    const made = await photo(i + 1);
    if (!made) {
      console.log("  photos and thumbnails skipped: the sharp package did not load in Node");
      return;
    }
    photos.push(made);
  }
  const photoSize = Math.round(photos.reduce((sum, p) => sum + p.length, 0) / photos.length);
  const sameSize = Array.from({ length: runs }, () => mp4(photoSize));
  const photoUploads = [];
  const mp4Uploads = [];
  const photoIds = [];
  for (let i = 0; i < runs; i++) {
    photoUploads.push(await timed(async () => { photoIds.push((await doors.inline(photos[i], "image/jpeg")).attachment_id); }));
    mp4Uploads.push(await timed(() => doors.inline(sameSize[i], "video/mp4")));
  }
  console.log(`\n    photo upload: 1600×1200 JPEG of about ${(photoSize / MB).toFixed(2)} MB, inline`);
  table([
    ["upload", "median", "MB/s"],
    ["relay: JPEG, re-encoded without metadata", `${median(photoUploads).toFixed(1)} ms`, rate(photoSize, median(photoUploads))],
    ["relay: MP4 of the same size, stored as sent", `${median(mp4Uploads).toFixed(1)} ms`, rate(photoSize, median(mp4Uploads))],
  ]);

  const firstHits = [];
  for (const id of photoIds) {
    firstHits.push(await timed(async () => expectStatus(await request({ port: relay.port, path: `/v1/attachments/${id}?w=${THUMBNAIL_WIDTH}`, headers: auth }), 200, "thumbnail")));
  }
  const cachedHits = [];
  for (let i = 0; i < runs * 4; i++) {
    cachedHits.push(await timed(async () => expectStatus(await request({ port: relay.port, path: `/v1/attachments/${photoIds[0]}?w=${THUMBNAIL_WIDTH}`, headers: auth }), 200, "cached thumbnail")));
  }
  const bareSources = [];
  for (const bytes of photos) bareSources.push(await bare(bytes));
  const bareFirst = [];
  for (const key of bareSources) bareFirst.push(await timed(async () => expectStatus(await request({ port: baseline.port, path: `/thumb/${key}?w=${THUMBNAIL_WIDTH}` }), 200, "baseline thumbnail")));
  const bareCached = [];
  for (let i = 0; i < runs * 4; i++) {
    bareCached.push(await timed(async () => expectStatus(await request({ port: baseline.port, path: `/r2/${bareSources[0]}/w${THUMBNAIL_WIDTH}` }), 200, "baseline cached thumbnail")));
  }
  console.log(`\n    thumbnails ?w=${THUMBNAIL_WIDTH} of those photos: first hit on ${runs} fresh photos, cached hit ${runs * 4} times`);
  table([
    ["target", "first p50", "first max", "cached p50", "cached p99"],
    ["relay GET /v1/attachments/<id>?w=", `${median(firstHits).toFixed(1)} ms`, `${Math.max(...firstHits).toFixed(1)} ms`, `${median(cachedHits).toFixed(1)} ms`, `${percentile(cachedHits, 99).toFixed(1)} ms`],
    ["bare R2 → Images → R2 / R2 get", `${median(bareFirst).toFixed(1)} ms`, `${Math.max(...bareFirst).toFixed(1)} ms`, `${median(bareCached).toFixed(1)} ms`, `${percentile(bareCached, 99).toFixed(1)} ms`],
  ]);
}
