// Attachments on an app origin (WIRE §4.3, §5.6): the signed-in owner uploads app-scoped
// files at /_svc/attachments and anyone who may open the app reads them at
// /_svc/attachments/<id>; a visitor may upload only with ?collection= naming a collection
// anyone may write, images only, within the anonymous limits; everyone else is refused
// (upload_forbidden on a public app, unauthorized on a private one) and nothing is stored.
import { describe, expect, it } from "vitest";
import { call, count, dispatch, expectError, json } from "../helpers";
import { appCall, appCallWith, appRequest, deploy, ownerToken } from "../serve/helpers";
import { PNG, storedForm, uploader, utf8 } from "./helpers";

const guestbook = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  "x-service-manifest": {
    app: { name: "Guestbook" },
    collections: {
      entries: { read: ["anyone"], write: ["anyone"], update: ["owner"], delete: ["owner"] },
      notes: { read: ["owner"], write: ["owner"], delete: ["owner"] },
    },
  },
};

function form(bytes: Uint8Array, type: string, name = "file.bin"): FormData {
  const body = new FormData();
  body.set("file", new File([bytes], name, { type }));
  return body;
}

function upload(slug: string, bytes: Uint8Array, type: string, opts: { token?: string; query?: string; ip?: string } = {}, overrides?: Record<string, unknown>): Promise<Response> {
  const request = appRequest(slug, `/_svc/attachments${opts.query ?? ""}`, { method: "POST", body: form(bytes, type, "pic.png"), ...(opts.token ? { token: opts.token } : {}) });
  if (opts.ip) request.headers.set("cf-connecting-ip", opts.ip);
  return dispatch(request, overrides);
}

describe("/_svc/attachments", () => {
  it("the owner uploads app-scoped files that viewers of a public app can open", async () => {
    const u = await uploader();
    const app = await deploy(u.owner, { manifest: guestbook });
    const token = await ownerToken(u.owner.human, app.slug);
    const ref = await json<{ attachment_id: string; scope: string; app_id: string; mime: string; url: string }>(await upload(app.slug, PNG, "image/png", { token }), 201);
    expect(ref).toMatchObject({ scope: "app", app_id: app.app_id, mime: "image/png" });
    expect(ref.url).toBe(`http://${app.slug}.localhost:8787/_svc/attachments/${ref.attachment_id}`);
    const res = await appCall(app.slug, `/_svc/attachments/${ref.attachment_id}`);
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(await storedForm(PNG));
    expect(res.headers.get("content-security-policy")).toContain("sandbox");
    await expectError(await appCall(app.slug, "/_svc/attachments/att_nothinghere00"), 404, "attachment_not_found");
    const other = await deploy(u.owner, { manifest: guestbook });
    await expectError(await appCall(other.slug, `/_svc/attachments/${ref.attachment_id}`), 404, "attachment_not_found");
    // The owner's agent lists the page's upload among its attachments; a stranger's agent does not.
    const listed = await json<{ items: Array<{ attachment_id: string }> }>(await call("/v1/attachments", { key: u.key }), 200);
    expect(listed.items.map((item) => item.attachment_id)).toContain(ref.attachment_id);
    const stranger = await uploader();
    const theirs = await json<{ items: Array<{ attachment_id: string }> }>(await call("/v1/attachments", { key: stranger.key }), 200);
    expect(theirs.items.map((item) => item.attachment_id)).not.toContain(ref.attachment_id);
  });

  it("a private app's files open for the owner only, and anonymous uploads are unauthorized", async () => {
    const u = await uploader();
    const app = await deploy(u.owner, { manifest: guestbook, visibility: "private" });
    const token = await ownerToken(u.owner.human, app.slug);
    const ref = await json<{ attachment_id: string }>(await upload(app.slug, PNG, "image/png", { token }), 201);
    expect((await appCall(app.slug, `/_svc/attachments/${ref.attachment_id}`, { token })).status).toBe(200);
    await expectError(await appCall(app.slug, `/_svc/attachments/${ref.attachment_id}`), 404, "attachment_not_found");
    await expectError(await upload(app.slug, PNG, "image/png"), 401, "unauthorized");
  });

  it("visitors upload images only through a collection anyone may write, within the limits", async () => {
    const u = await uploader();
    const app = await deploy(u.owner, { manifest: guestbook });
    const before = await count("attachments", "app_id = ?1", app.app_id);
    await expectError(await upload(app.slug, PNG, "image/png"), 403, "upload_forbidden");
    await expectError(await upload(app.slug, PNG, "image/png", { query: "?collection=notes" }), 403, "upload_forbidden");
    await expectError(await upload(app.slug, PNG, "image/png", { query: "?collection=nope" }), 404, "collection_not_found");
    await expectError(await upload(app.slug, utf8("just text"), "text/plain", { query: "?collection=entries" }), 403, "upload_forbidden");
    await expectError(await upload(app.slug, PNG, "image/png", { query: "?collection=entries" }, { ANON_UPLOAD_MAX_BYTES: "10" }), 413, "attachment_size_exceeded");
    await expectError(await upload(app.slug, PNG, "image/png", { query: "?collection=entries" }, { ANON_BYTES_PER_APP: "10" }), 413, "quota_exceeded");
    expect(await count("attachments", "app_id = ?1", app.app_id)).toBe(before);

    const ip = `10.77.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
    const limits = { ANON_UPLOADS_PER_IP_PER_APP_DAY: "1" };
    const brief = await json(await upload(app.slug, PNG, "image/png", { query: "?collection=entries", ip }, limits), 201);
    expect(Object.keys(brief).sort()).toEqual(["attachment_id", "filename", "mime", "size"]);
    expect(brief).toMatchObject({ mime: "image/png", size: (await storedForm(PNG)).length, filename: "pic.png" });
    await expectError(await upload(app.slug, PNG, "image/png", { query: "?collection=entries", ip }, limits), 429, "rate_limited");
    expect((await upload(app.slug, PNG, "image/png", { query: "?collection=entries" }, limits)).status).toBe(201);
    expect(await count("attachments", "app_id = ?1 AND uploader_kind IN ('anon', 'visitor')", app.app_id)).toBe(2);
    // Nothing an anonymous visitor sends is kept as their address.
    expect(await count("attachments", "anon_address_hash LIKE ?1", `%${ip}%`)).toBe(0);
    await expectError(await appCallWith({}, app.slug, "/_svc/attachments", { method: "POST", body: "not a form", headers: { "content-type": "text/plain" } }), 403, "upload_forbidden");
  });
});
