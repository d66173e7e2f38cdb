// `service deploy [dir|file]`: create an app (POST /v1/apps) or, with --app, deploy a new
// version of one (POST /v1/apps/:id/versions), per spec C "deploy" and WIRE §2.2.
// The package is read by deploy-package.ts; whatever it does not provide is left out of
// a redeploy so the relay carries the live part forward. --check is the relay's dry run.
// A create prints the relay's body; a redeploy prints the redeploy body merged with a
// follow-up GET /v1/apps/:id (WIRE §6.7, §7 row 11). A refused redeploy
// (422 manifest_incompatible_redeploy) surfaces as the relay's error, details.breaks
// included, on stderr with exit 1.
import { boolFlag, listFlag, stringFlag } from "../../argv.ts";
import { requireKey } from "../../context.ts";
import { readPackage, DOCUMENT_NAME, MANIFEST_NAME, type PackageAsset } from "../../deploy-package.ts";
import { CliError, invalidArgs } from "../../errors.ts";
import type { Auth, RelayClient } from "../../http.ts";
import { uploadAttachment } from "../../uploader.ts";
import { resolveApp, type ResolvedApp } from "../../resolve-app.ts";
import type { Command } from "../types.ts";

const VISIBILITIES = ["private", "link", "public"];

export const deploy: Command = {
  noun: "deploy",
  verb: "",
  summary: "create an app from index.html + manifest.json + assets/, or redeploy one with --app",
  description: [
    "Directory form: <dir> holds index.html and manifest.json (both needed to create) and an optional",
    "assets/ folder, deployed recursively at assets/<path> (dot entries skipped; at most 50 files of at",
    "most 5,000,000 bytes; no .js .mjs .cjs .jsx .ts .tsx .css .svg .html .htm .xhtml). Other files next",
    "to index.html are left behind with a warning on stderr. Files of 1,000,000 bytes or more are",
    "uploaded first as attachments (presign, PUT, confirm; progress on stderr when it is a terminal) and",
    "deployed by reference; smaller ones travel inline.",
    "Single-file form: one .html file; the manifest comes from --manifest or a manifest.json beside it.",
    "",
    "Without --app a new app is created and the relay's answer printed. With --app (id or slug) a new",
    "version is deployed: parts the package lacks are kept (an empty assets/ folder clears the assets),",
    "and a manifest that would strand rows or widen access is refused with the breaks listed unless",
    "--force. --check asks the relay for a dry run and creates nothing.",
  ].join("\n"),
  flags: [
    { name: "app", kind: "string", value: "<id|slug>", description: "redeploy this app instead of creating one" },
    { name: "manifest", kind: "string", value: "<path|json>", description: "manifest file or inline JSON (overrides manifest.json)" },
    { name: "slug", kind: "string", value: "<slug>", description: "the new app's slug (create only; not with --visibility link)" },
    { name: "visibility", kind: "string", value: "<private|link|public>", description: "the new app's visibility (create only; default private)" },
    { name: "asset", kind: "string", value: "<local>=<app-path>", repeatable: true, description: "also ship this file at app-path (repeatable; wins over assets/)" },
    { name: "force", kind: "boolean", description: "with --app: deploy even if the compatibility gate reports breaks" },
    { name: "check", kind: "boolean", description: "dry run: validate and report { ok, warnings[, compat, breaks] } only" },
  ],
  args: [{ name: "dir|file", required: false, description: "the package directory (default: the current one) or one .html file" }],
  examples: [
    "service deploy ./my-app --visibility public --slug my-app",
    "service deploy ./my-app --check",
    "service deploy ./my-app --app my-app",
    "service deploy page.html --manifest manifest.json --app my-app --force",
  ],
  skillCheck: true,
  async run(ctx) {
    const appRef = stringFlag(ctx.flags, "app");
    const slug = stringFlag(ctx.flags, "slug");
    const visibility = stringFlag(ctx.flags, "visibility");
    const force = boolFlag(ctx.flags, "force");
    const check = boolFlag(ctx.flags, "check");
    if (appRef !== undefined) {
      if (slug !== undefined) throw invalidArgs("--slug cannot be used with --app: a slug never changes after create.", ctx.command, { flag: "--slug" });
      if (visibility !== undefined) {
        throw invalidArgs("--visibility cannot be used with --app; change it with `service apps update <app> --visibility <v>`.", ctx.command, { flag: "--visibility" });
      }
    } else if (force) {
      throw invalidArgs("--force only applies to a redeploy (--app <id|slug>).", ctx.command, { flag: "--force" });
    }
    if (visibility !== undefined && !VISIBILITIES.includes(visibility)) {
      throw invalidArgs(`--visibility must be one of ${VISIBILITIES.join(", ")}; got ${JSON.stringify(visibility)}.`, ctx.command, { flag: "--visibility" });
    }

    const pkg = readPackage({
      target: ctx.args[0] ?? ".",
      manifest: stringFlag(ctx.flags, "manifest"),
      assetFlags: listFlag(ctx.flags, "asset"),
      command: ctx.command,
      cwd: process.cwd(),
    });

    if (appRef === undefined) {
      const missing = [pkg.html === undefined ? DOCUMENT_NAME : null, pkg.manifest === undefined ? MANIFEST_NAME : null].filter(Boolean);
      if (missing.length > 0) {
        throw invalidArgs(
          `A new app needs both ${DOCUMENT_NAME} and ${MANIFEST_NAME}; missing: ${missing.join(", ")}.` +
            (pkg.form === "file" ? " Pass the manifest with --manifest <path|json> or put manifest.json beside the file." : ""),
          ctx.command,
        );
      }
    } else if (pkg.html === undefined && pkg.manifest === undefined && pkg.assets === undefined) {
      throw invalidArgs(`Nothing to redeploy: no ${DOCUMENT_NAME}, ${MANIFEST_NAME}, assets/ folder or --asset was found.`, ctx.command);
    }

    const resolved = ctx.resolve();
    const key = requireKey(resolved);
    const relay = ctx.relay(resolved.url);
    for (const warning of pkg.warnings) ctx.out.warn(warning);

    const parts: Record<string, unknown> = {};
    if (pkg.html !== undefined) parts.html = pkg.html;
    if (pkg.manifest !== undefined) parts.manifest = pkg.manifest;
    const auth = { kind: "key" as const, key };

    if (appRef === undefined) {
      if (pkg.assets !== undefined) parts.assets = await sendable(ctx.out.warn, relay, auth, pkg.assets, null, check);
      // The dry run carries slug and visibility too, so it answers what the real create would
      // (slug_not_allowed_for_link, a taken slug, visibility-dependent warnings).
      const body = { ...parts, ...(visibility !== undefined ? { visibility } : {}), ...(slug !== undefined ? { slug } : {}), ...(check ? { dry_run: true } : {}) };
      ctx.out.json(await relay.object("POST", "/v1/apps", { auth, body }));
      return;
    }

    if (pkg.assets !== undefined && !pkg.assetsFolder) {
      ctx.out.warn("there is no assets/ folder, so the --asset files become the app's whole asset set; live assets not among them are removed.");
    }
    const app = await resolveApp(relay, key, appRef);
    if (pkg.assets !== undefined) parts.assets = await sendable(ctx.out.warn, relay, auth, pkg.assets, app.id, check);
    const path = `/v1/apps/${encodeURIComponent(app.id)}`;
    const body = { ...parts, ...(force ? { force: true } : {}), ...(check ? { dry_run: true } : {}) };
    const result = await relay.object("POST", `${path}/versions`, { auth, body });
    if (check) {
      ctx.out.json(result);
      return;
    }
    ctx.out.json(merged(result, await appRecord(ctx.out.warn, relay, key, app)));
  },
};

/**
 * The asset list as the relay takes it: large files are uploaded first (presign → PUT →
 * confirm) and sent as `{ path, attachment_id }` — agent-scoped for a new app (it has no
 * id yet), scoped to the app on a redeploy so they go when the app goes. A dry run
 * uploads nothing: it leaves those files out and says so.
 */
async function sendable(warn: (text: string) => void, relay: RelayClient, auth: Auth, assets: PackageAsset[], appId: string | null, dryRun: boolean): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const asset of assets) {
    if (!("local" in asset)) {
      out.push(asset);
      continue;
    }
    if (dryRun) {
      warn(`--check does not upload ${asset.path} (1 MB or more), so the dry run leaves it out.`);
      continue;
    }
    const scope = appId === null ? { scope: "agent" as const } : { scope: "app" as const, appId };
    const ref = await uploadAttachment(relay, auth, { file: asset.local, filename: asset.path.slice(asset.path.lastIndexOf("/") + 1), ...scope });
    out.push({ path: asset.path, attachment_id: ref.attachment_id });
  }
  return out;
}

/** The app's slug, url and visibility after a redeploy: a fresh GET, else what resolution saw. */
async function appRecord(warn: (text: string) => void, relay: RelayClient, key: string, app: ResolvedApp): Promise<Record<string, unknown>> {
  try {
    return await relay.object("GET", `/v1/apps/${encodeURIComponent(app.id)}`, { auth: { kind: "key", key } });
  } catch (err) {
    const known = app.detail ?? app.summary;
    if (!known || !(err instanceof CliError)) throw err;
    warn(`the new version is live, but reading the app back failed (${err.code}); slug, url and visibility are from before the deploy.`);
    return known;
  }
}

/** WIRE §6.7 `deploy --app`: { app_id, slug, url, version, visibility, created: false, compat, breaks?, warnings? }. */
function merged(result: Record<string, unknown>, app: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    app_id: result.app_id ?? app.id,
    slug: app.slug,
    url: app.url,
    version: result.version,
    visibility: app.visibility,
    created: false,
    compat: result.compat,
  };
  if (result.breaks !== undefined) out.breaks = result.breaks;
  if (result.warnings !== undefined) out.warnings = result.warnings;
  // Anything newer the relay adds (a webhook secret shown once, say) is passed through.
  for (const [k, v] of Object.entries(result)) if (!(k in out)) out[k] = v;
  return out;
}
