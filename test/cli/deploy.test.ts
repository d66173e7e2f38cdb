// `service deploy` as a real process. Against the real test relay: create from a
// directory (stray file reported on stderr, dot entries skipped), dry runs of a create and
// a redeploy, a redeploy carrying only new HTML, a redeploy that drops a collection
// (refused with the breaks on stderr, then forced), refused asset types, the single-file
// form, and the relay's own refusals (slug with link visibility, unclaimed agent).
// Against a small recording stand-in relay: exactly what goes on the wire (asset paths,
// base64, mime, carry-forward, `assets: []`, --asset overrides, caps) and the merged
// redeploy output.
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempHomes, fakeIp, mintClaimCode, relayUrl, runCli, signIn, tempHome, type CliRun, type RunOptions } from "./helpers.ts";

type Obj = Record<string, unknown>;

const PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const PNG = Buffer.from(PNG_B64, "base64");

const NOTE = {
  type: "object",
  properties: { text: { type: "string", maxLength: 500 } },
  required: ["text"],
  additionalProperties: false,
};

function manifest(collections: Obj = { notes: { schema: { $ref: "#/$defs/Note" }, read: ["owner"], write: ["owner"], delete: ["owner"] } }, name = "Notes"): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: { Note: NOTE },
    "x-service-manifest": { app: { name }, collections },
  };
}

const dirs: string[] = [];

/** Writes files (relative path → text or bytes) into a fresh temporary directory. */
function writeDir(files: Record<string, string | Buffer | Obj>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "service-deploy-test-"));
  dirs.push(dir);
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(dir, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, typeof content === "string" || Buffer.isBuffer(content) ? content : JSON.stringify(content, null, 2));
  }
  return dir;
}

interface Agent {
  key: string;
  cli(args: string[], options?: RunOptions): Promise<CliRun>;
}

/** An agent on the test relay (claimed unless told otherwise), set up over HTTP from an address of its own. */
async function agent(claimed = true): Promise<Agent> {
  const base = relayUrl();
  const ip = fakeIp();
  const reg = await fetch(`${base}/v1/register`, {
    method: "POST", headers: { "content-type": "application/json", "cf-connecting-ip": ip }, body: JSON.stringify({ name: "cli-deploy-test" }),
  });
  expect(reg.status, await reg.clone().text()).toBe(201);
  const key = ((await reg.json()) as { api_key: string }).api_key;
  if (claimed) {
    const code = await mintClaimCode(await signIn());
    const claim = await fetch(`${base}/v1/agents/claim`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "cf-connecting-ip": ip }, body: JSON.stringify({ code }),
    });
    expect(claim.status, await claim.clone().text()).toBe(200);
  }
  const home = tempHome();
  return {
    key,
    cli: (args, options = {}) => runCli(home, args, { ...options, env: { SERVICE_URL: base, SERVICE_API_KEY: key, ...options.env } }),
  };
}

async function document(key: string, appId: string): Promise<{ html: string; version: number }> {
  const res = await fetch(`${relayUrl()}/v1/apps/${appId}/document`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as { html: string; version: number };
}

function ok(run: CliRun): CliRun {
  expect(run.code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
  return run;
}

afterAll(() => {
  cleanupTempHomes();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("deploy against the relay", () => {
  let me: Agent;
  beforeAll(async () => {
    me = await agent();
  });

  it("creates from a directory, dry-runs, redeploys new HTML, refuses a dropped collection, then forces it", async () => {
    const html = "<!doctype html><title>Notes</title><h1>Notes v1</h1><img src=\"assets/logo.png\">";
    const dir = writeDir({
      "index.html": html,
      "manifest.json": manifest(),
      "assets/logo.png": PNG,
      "assets/.DS_Store": "junk",
      "notes.txt": "not part of the app",
      ".env": "SECRET=1",
    });

    // A dry run of the create: the relay's { ok, warnings }, nothing created.
    const check = ok(await me.cli(["deploy", dir, "--check"]));
    expect(check.json()).toEqual({ ok: true, warnings: [] });
    expect(check.stderr).toContain("warning: ");
    expect(check.stderr).toContain("notes.txt");
    expect(ok(await me.cli(["apps", "list"])).json<{ items: unknown[] }>().items).toHaveLength(0);

    const created = ok(await me.cli(["deploy", dir]));
    const app = created.json<{ app_id: string; slug: string; url: string }>();
    expect(app).toEqual({ app_id: expect.any(String), slug: expect.any(String), visibility: "private", url: expect.any(String), version: 1, created: true });
    expect(app.url).toContain(app.slug);
    // The stray file is reported (once, as a warning line); dot entries are skipped silently.
    const warnings = created.stderr.trim().split("\n");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^warning: .*notes\.txt.* not deployed/);
    expect(created.stderr).not.toContain(".env");

    const shown = ok(await me.cli(["apps", "show", app.app_id])).json<Obj>();
    expect(shown).toMatchObject({ id: app.app_id, slug: app.slug, current_version: 1, status: "active", visibility: "private" });
    expect((shown.manifest as { "x-service-manifest": { collections: Obj } })["x-service-manifest"].collections).toHaveProperty("notes");
    expect(await document(me.key, app.app_id)).toMatchObject({ html, version: 1 });

    // A dry run of a redeploy adds the compat verdict; the slug works as <app>.
    const recheck = ok(await me.cli(["deploy", dir, "--app", app.slug, "--check"]));
    expect(recheck.json()).toEqual({ ok: true, warnings: [], compat: "clean" });
    expect((await document(me.key, app.app_id)).version).toBe(1);

    // Only index.html: the manifest and the assets are carried forward.
    const html2 = "<!doctype html><title>Notes</title><h1>Notes v2</h1>";
    const htmlOnly = writeDir({ "index.html": html2 });
    const redeployed = ok(await me.cli(["deploy", htmlOnly, "--app", app.slug]));
    expect(redeployed.json()).toEqual({
      app_id: app.app_id, slug: app.slug, url: app.url, version: 2, visibility: "private", created: false, compat: "clean",
    });
    expect(redeployed.stderr).toBe("");
    expect(await document(me.key, app.app_id)).toMatchObject({ html: html2, version: 2 });
    const after = ok(await me.cli(["apps", "show", app.slug])).json<Obj>();
    expect(after.current_version).toBe(2);
    expect(after.manifest).toEqual(shown.manifest);

    // Dropping the collection strands its rows: the dry run says so, the real one is refused.
    const dropped = writeDir({ "manifest.json": manifest({ tasks: { schema: { $ref: "#/$defs/Note" }, read: ["owner"], write: ["owner"], delete: ["owner"] } }) });
    const dryDrop = ok(await me.cli(["deploy", dropped, "--app", app.app_id, "--check"]));
    expect(dryDrop.json()).toMatchObject({ ok: false, compat: "incompatible", breaks: expect.arrayContaining([expect.objectContaining({ path: expect.any(String), message: expect.any(String) })]) });

    const refused = await me.cli(["deploy", dropped, "--app", app.app_id]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    const error = refused.error();
    expect(error.code).toBe("manifest_incompatible_redeploy");
    const breaks = (error.details as { breaks: Array<{ path: string; message: string }> }).breaks;
    expect(breaks.length).toBeGreaterThan(0);
    expect(JSON.stringify(breaks)).toContain("notes");
    expect((await document(me.key, app.app_id)).version).toBe(2);

    const forcedCheck = ok(await me.cli(["deploy", dropped, "--app", app.app_id, "--check", "--force"]));
    expect(forcedCheck.json()).toMatchObject({ ok: true, compat: "forced", breaks });

    const forced = ok(await me.cli(["deploy", dropped, "--app", app.app_id, "--force"]));
    expect(forced.json()).toEqual({
      app_id: app.app_id, slug: app.slug, url: app.url, version: 3, visibility: "private", created: false, compat: "forced", breaks,
    });
    const collections = (ok(await me.cli(["apps", "show", app.app_id])).json<Obj>().manifest as { "x-service-manifest": { collections: Obj } })["x-service-manifest"].collections;
    expect(Object.keys(collections)).toEqual(["tasks"]);
    // The document was carried forward through both manifest-only deploys.
    expect(await document(me.key, app.app_id)).toMatchObject({ html: html2, version: 3 });
  });

  it("refuses script, style, SVG and HTML assets locally, naming the file", async () => {
    const base = { "index.html": "<!doctype html><p>x</p>", "manifest.json": manifest() };
    for (const [file, ext] of [["assets/app.js", "js"], ["assets/styles/site.css", "css"], ["assets/icons/logo.svg", "svg"], ["assets/extra.html", "html"], ["assets/lib.mjs", "mjs"], ["assets/x.TSX", "tsx"]]) {
      const run = await me.cli(["deploy", writeDir({ ...base, [file]: "whatever" })]);
      expect(run.code, run.stderr).toBe(1);
      const error = run.error();
      expect(error.code).toBe("invalid_args");
      expect(error.message).toContain(file);
      expect(error.message).toContain(`.${ext}`);
      expect(error.hint).toContain("service deploy --help");
    }
    const flag = await me.cli(["deploy", writeDir({ ...base, "icon.png": PNG }), "--asset", `${writeDir({ "x.svg": "<svg/>" })}/x.svg=img/x.svg`]);
    expect(flag.code).toBe(1);
    expect(flag.error()).toMatchObject({ code: "invalid_args", message: expect.stringContaining("img/x.svg") });
    expect(ok(await me.cli(["apps", "list"])).json<{ items: unknown[] }>().items).toHaveLength(1);
  });

  it("deploys a single .html file with --manifest (inline JSON or a path) or a manifest.json beside it", async () => {
    const dir = writeDir({ "page.html": "<!doctype html><p>single</p>", "other.json": manifest(undefined, "Other") });
    const file = path.join(dir, "page.html");

    const missing = await me.cli(["deploy", file]);
    expect(missing.code).toBe(1);
    expect(missing.error()).toMatchObject({ code: "invalid_args", message: expect.stringContaining("--manifest") });

    const inline = ok(await me.cli(["deploy", file, "--manifest", JSON.stringify(manifest(undefined, "Inline")), "--visibility", "public"]));
    const app = inline.json<{ app_id: string; slug: string }>();
    expect(inline.json()).toMatchObject({ created: true, visibility: "public", version: 1 });
    expect(app.slug).toMatch(/^inline-/);
    expect((await document(me.key, app.app_id)).html).toBe("<!doctype html><p>single</p>");

    const fromPath = ok(await me.cli(["deploy", file, "--manifest", path.join(dir, "other.json")]));
    expect(fromPath.json<{ slug: string }>().slug).toMatch(/^other-/);

    writeFileSync(path.join(dir, "manifest.json"), JSON.stringify(manifest(undefined, "Beside")));
    const beside = ok(await me.cli(["deploy", file, "--check"]));
    expect(beside.json()).toEqual({ ok: true, warnings: [] });

    // Redeploying one file sends the HTML alone.
    writeFileSync(file, "<!doctype html><p>single v2</p>");
    const re = ok(await me.cli(["deploy", file, "--app", app.app_id, "--manifest", JSON.stringify(manifest(undefined, "Inline"))]));
    expect(re.json()).toMatchObject({ app_id: app.app_id, version: 2, created: false, compat: "clean", visibility: "public" });
    expect((await document(me.key, app.app_id)).html).toBe("<!doctype html><p>single v2</p>");

    const notHtml = await me.cli(["deploy", path.join(dir, "other.json")]);
    expect(notHtml.code).toBe(1);
    expect(notHtml.error().code).toBe("invalid_args");
  });

  it("passes the relay's refusals through: slug with link visibility, a taken slug", async () => {
    const dir = writeDir({ "index.html": "<!doctype html><p>link</p>", "manifest.json": manifest() });
    for (const extra of [[], ["--check"]]) {
      const run = await me.cli(["deploy", dir, "--slug", "my-link-app", "--visibility", "link", ...extra]);
      expect(run.code).toBe(1);
      expect(run.error()).toMatchObject({ code: "slug_not_allowed_for_link", hint: expect.any(String), docs_url: expect.any(String) });
    }
    const slug = `taken-${Math.random().toString(36).slice(2, 8)}`;
    expect(ok(await me.cli(["deploy", dir, "--slug", slug])).json()).toMatchObject({ slug, created: true });
    const again = await me.cli(["deploy", dir, "--slug", slug, "--check"]);
    expect(again.code).toBe(1);
    expect(again.error().code).toBe("slug_taken");
  });

  it("rejects flag combinations locally: --slug or --visibility with --app, --force without it, a bad visibility", async () => {
    const dir = writeDir({ "index.html": "<p>x</p>", "manifest.json": manifest() });
    for (const args of [
      [dir, "--app", "some-app", "--slug", "x"],
      [dir, "--app", "some-app", "--visibility", "public"],
      [dir, "--force"],
      [dir, "--visibility", "secret"],
      [dir, "--check", "--check"],
      [writeDir({ "manifest.json": manifest() })],
      [writeDir({ "index.html": "<p>x</p>" })],
      [writeDir({ "notes.txt": "x" }), "--app", "some-app"],
      [path.join(dir, "nope")],
    ]) {
      const run = await me.cli(["deploy", ...args]);
      expect(run.code, args.join(" ")).toBe(1);
      expect(run.error().code).toBe("invalid_args");
    }
    const unknown = await me.cli(["deploy", dir, "--app", "no-such-app"]);
    expect(unknown.code).toBe(1);
    expect(unknown.error().code).toBe("app_not_found");
  });

  it("answers an unclaimed agent with the relay's agent_not_claimed", async () => {
    const loner = await agent(false);
    const run = await loner.cli(["deploy", writeDir({ "index.html": "<p>x</p>", "manifest.json": manifest() })]);
    expect(run.code).toBe(1);
    expect(run.error()).toMatchObject({ code: "agent_not_claimed", hint: expect.any(String) });
  });

  it("answers --help without deploying", async () => {
    const run = ok(await me.cli(["deploy", writeDir({ "index.html": "<p>x</p>", "manifest.json": manifest() }), "--help"]));
    expect(run.stdout).toContain("Usage: service deploy [dir|file] [flags]");
    for (const flag of ["--app", "--manifest", "--slug", "--visibility", "--asset", "--force", "--check"]) expect(run.stdout).toContain(flag);
    expect(ok(await me.cli(["--help"])).stdout).toContain("deploy");
  });
});

describe("deploy on the wire (stand-in relay)", () => {
  interface Seen {
    method: string;
    path: string;
    body: Obj | null;
  }
  let server: Server;
  let url: string;
  let seen: Seen[] = [];
  const APP_ID = "aappidthatlooksgenerated01";
  const summary = { id: APP_ID, slug: "stand-in", visibility: "public", status: "active", url: "http://stand-in.localhost/" };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = "";
      req.on("data", (d) => { text += d; });
      req.on("end", () => {
        const entry = { method: req.method ?? "", path: req.url ?? "", body: text ? (JSON.parse(text) as Obj) : null };
        seen.push(entry);
        const send = (status: number, body: unknown) => {
          res.writeHead(status, { "content-type": "application/json" });
          res.end(JSON.stringify(body));
        };
        const p = entry.path;
        if (p === "/v1/apps" && entry.method === "POST") {
          return send(entry.body?.dry_run ? 200 : 201, entry.body?.dry_run ? { ok: true, warnings: [] }
            : { app_id: APP_ID, slug: "stand-in", visibility: "public", url: summary.url, version: 1, created: true });
        }
        if (p === `/v1/apps/${APP_ID}/versions`) {
          return send(200, { app_id: APP_ID, version: 7, compat: "clean", warnings: ["a warning"], webhook_secret: "whsec_x" });
        }
        if (p === `/v1/apps/${APP_ID}`) return send(200, { ...summary, manifest: {}, current_version: 7 });
        if (p.startsWith("/v1/apps/")) return send(404, { error: { code: "app_not_found", message: "no such app" } });
        if (p.startsWith("/v1/apps?")) {
          const slug = new URL(p, "http://x").searchParams.get("slug");
          return send(200, { items: slug === "stand-in" ? [summary] : [], next_cursor: null });
        }
        return send(404, { error: { code: "not_found", message: "nothing here" } });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const KEY = "svc_00112233445566778899aabbccddeeff";
  async function cli(args: string[]): Promise<CliRun> {
    seen = [];
    return runCli(tempHome(), args, { env: { SERVICE_URL: url, SERVICE_API_KEY: KEY } });
  }
  const deploys = () => seen.filter((s) => s.method === "POST");

  it("sends index.html, manifest.json and every assets/ file as base64 (nested, dot entries skipped, mime only for text-like types)", async () => {
    const dir = writeDir({
      "index.html": "<p>hi</p>",
      "manifest.json": manifest(),
      "assets/logo.png": PNG,
      "assets/data/info.json": "{\"a\":1}",
      "assets/data/notes.txt": "plain",
      "assets/data/table.csv": "a,b\n1,2\n",
      "assets/.hidden/secret.txt": "no",
      "assets/.gitkeep": "",
      "assets/deep/er/photo.gif": Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64"),
    });
    const run = ok(await cli(["deploy", dir, "--slug", "stand-in", "--visibility", "public"]));
    expect(run.json()).toMatchObject({ app_id: APP_ID, created: true });
    const [post] = deploys();
    expect(post.path).toBe("/v1/apps");
    expect(post.body).toEqual({
      html: "<p>hi</p>",
      manifest: manifest(),
      visibility: "public",
      slug: "stand-in",
      assets: [
        { path: "assets/data/info.json", content_base64: Buffer.from("{\"a\":1}").toString("base64"), mime: "application/json" },
        { path: "assets/data/notes.txt", content_base64: Buffer.from("plain").toString("base64"), mime: "text/plain" },
        { path: "assets/data/table.csv", content_base64: Buffer.from("a,b\n1,2\n").toString("base64"), mime: "text/csv" },
        { path: "assets/deep/er/photo.gif", content_base64: "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7" },
        { path: "assets/logo.png", content_base64: PNG_B64 },
      ],
    });

    const dry = ok(await cli(["deploy", dir, "--check", "--visibility", "link"]));
    expect(dry.json()).toEqual({ ok: true, warnings: [] });
    expect(deploys()[0].body).toMatchObject({ dry_run: true, visibility: "link" });
  });

  it("redeploys only what the package has: no assets key without assets/, [] for an empty assets/ folder, force when asked", async () => {
    const htmlOnly = writeDir({ "index.html": "<p>v2</p>" });
    const run = ok(await cli(["deploy", htmlOnly, "--app", "stand-in"]));
    // The merged output of WIRE §6.7: redeploy body plus the app's slug, url and visibility.
    expect(run.stdout).toBe(`${JSON.stringify({
      app_id: APP_ID, slug: "stand-in", url: summary.url, version: 7, visibility: "public", created: false,
      compat: "clean", warnings: ["a warning"], webhook_secret: "whsec_x",
    }, null, 2)}\n`);
    const post = deploys()[0];
    expect(post.path).toBe(`/v1/apps/${APP_ID}/versions`);
    expect(post.body).toEqual({ html: "<p>v2</p>" });
    // <app> resolution: a slug is looked up with status=all; the app is read back after the deploy.
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      "GET /v1/apps?status=all&slug=stand-in&limit=1",
      `POST /v1/apps/${APP_ID}/versions`,
      `GET /v1/apps/${APP_ID}`,
    ]);

    const emptyAssets = writeDir({ "manifest.json": manifest() });
    mkdirSync(path.join(emptyAssets, "assets"));
    ok(await cli(["deploy", emptyAssets, "--app", APP_ID, "--force"]));
    expect(deploys()[0].body).toEqual({ manifest: manifest(), assets: [], force: true });
    expect(seen[0]).toMatchObject({ method: "GET", path: `/v1/apps/${APP_ID}` });

    const dry = ok(await cli(["deploy", htmlOnly, "--app", APP_ID, "--check"]));
    expect(dry.json()).toEqual({ app_id: APP_ID, version: 7, compat: "clean", warnings: ["a warning"], webhook_secret: "whsec_x" });
    expect(deploys()[0].body).toEqual({ html: "<p>v2</p>", dry_run: true });
  });

  it("resolves an id-looking value that is not an id by slug, and fails locally when nothing matches", async () => {
    const missing = await cli(["deploy", writeDir({ "index.html": "x" }), "--app", "bnotanidbutlookslikeone1"]);
    expect(missing.code).toBe(1);
    expect(missing.error()).toMatchObject({ code: "app_not_found", hint: expect.stringContaining("apps list") });
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      "GET /v1/apps/bnotanidbutlookslikeone1",
      "GET /v1/apps?status=all&slug=bnotanidbutlookslikeone1&limit=1",
    ]);
  });

  it("ships --asset files (repeatable, leading / stripped, winning over assets/) and does not report them as stray", async () => {
    const dir = writeDir({
      "index.html": "<p>x</p>",
      "manifest.json": manifest(),
      "assets/logo.png": Buffer.from("old"),
      "readme.md": "# hello",
      "stray.bin": "x",
    });
    const elsewhere = writeDir({ "new-logo.png": PNG });
    const run = ok(await cli([
      "deploy", dir, "--app", "stand-in",
      "--asset", `${path.join(elsewhere, "new-logo.png")}=/assets/logo.png`,
      "--asset", `${path.join(dir, "readme.md")}=docs/readme.md`,
    ]));
    expect(deploys()[0].body?.assets).toEqual([
      { path: "assets/logo.png", content_base64: PNG_B64 },
      { path: "docs/readme.md", content_base64: Buffer.from("# hello").toString("base64"), mime: "text/markdown" },
    ]);
    expect(run.stderr).toContain("stray.bin");
    expect(run.stderr).not.toContain("readme.md");

    // Without an assets/ folder the --asset files are the whole set: a redeploy says so.
    const htmlOnly = writeDir({ "index.html": "<p>y</p>" });
    const only = ok(await cli(["deploy", htmlOnly, "--app", APP_ID, "--asset", `${path.join(elsewhere, "new-logo.png")}=img/logo.png`]));
    expect(deploys()[0].body).toEqual({ html: "<p>y</p>", assets: [{ path: "img/logo.png", content_base64: PNG_B64 }] });
    expect(only.stderr).toMatch(/^warning: there is no assets\/ folder, so the --asset files become the app's whole asset set/);

    const bad = await cli(["deploy", dir, "--asset", "no-equals-sign"]);
    expect(bad.error()).toMatchObject({ code: "invalid_args", message: expect.stringContaining("<local>=<app-path>") });
    expect(seen).toHaveLength(0);
  });

  it("enforces the 50-file and 5,000,000-byte caps before sending anything", async () => {
    const many: Record<string, string> = { "index.html": "<p>x</p>", "manifest.json": JSON.stringify(manifest()) };
    for (let i = 0; i < 51; i++) many[`assets/f${i}.txt`] = `${i}`;
    const tooMany = await cli(["deploy", writeDir(many)]);
    expect(tooMany.code).toBe(1);
    expect(tooMany.error()).toMatchObject({ code: "invalid_args", message: expect.stringContaining("50") });

    delete many["assets/f50.txt"];
    ok(await cli(["deploy", writeDir(many)]));
    expect((deploys()[0].body?.assets as unknown[]).length).toBe(50);

    const big = writeDir({ "index.html": "<p>x</p>", "manifest.json": manifest(), "assets/big.bin": "" });
    truncateSync(path.join(big, "assets/big.bin"), 5_000_001);
    const tooBig = await cli(["deploy", big]);
    expect(tooBig.code).toBe(1);
    expect(tooBig.error()).toMatchObject({ code: "invalid_args", message: expect.stringContaining("big.bin") });
    expect(seen).toHaveLength(0);
  });
});
