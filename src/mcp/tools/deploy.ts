/**
 * `deploy_app` (WIRE-MCP §2.1): create an app or publish a new version through the same
 * deploy routes the CLI uses. Hosted, the tool reads no files on the relay's host, so
 * `html_path` is refused (§1.6: send the document inline).
 */
import * as z from "zod";
import { defineTool, hints, need, present, relay, repaired, type ToolDef } from "../define";
import { seg } from "../relay-call";
import { invalidArgs } from "../results";

const asset = z.union([
  z.strictObject({ path: z.string(), content_base64: z.string(), mime: z.string().optional() }),
  z.strictObject({ path: z.string(), attachment_id: z.string() }),
]);

const input = z.strictObject({
  app_id: z.string().optional(),
  html: z.string().min(1).optional(),
  html_path: z.string().optional(),
  manifest: z.record(z.string(), z.unknown()).nullable().optional(),
  visibility: z.enum(["private", "link", "public"]).optional(),
  slug: z.string().optional(),
  force: z.boolean().optional(),
  dry_run: z.boolean().optional(),
  check: z.boolean().optional(),
  assets: z.array(asset).optional(),
});

export const deployTool: ToolDef = defineTool({
  name: "deploy_app", annotations: hints("Deploy App", "F", "F", "F", "T"),
  description: "Create an app (html + manifest; no app_id) or publish a new version of one (app_id; send only what changed: omitted html, manifest or assets are kept). dry_run (or check) validates only. Assets are inline base64 or an attachment id; the _svc and b path prefixes are reserved.",
  input,
  run: (args, host) => {
    if (args.html_path !== undefined && args.html === undefined) throw invalidArgs("html_path is not available on the hosted relay; send the document inline as html");
    const dryRun = args.dry_run === true || args.check === true;
    const manifest = args.manifest === null ? undefined : repaired(args.manifest, "manifest");
    if (args.app_id === undefined || args.app_id === "") {
      need(args, "create", "html", "manifest");
      if (!dryRun && args.slug !== undefined && args.visibility === "link") throw invalidArgs("slug cannot be set on a link app");
      const body = dryRun
        ? present({ html: args.html, manifest, dry_run: true, assets: args.assets })
        : present({ html: args.html, manifest, visibility: args.visibility, slug: args.slug, assets: args.assets });
      return relay(host, { method: "POST", path: "/v1/apps", body });
    }
    if (args.html === undefined && manifest === undefined && args.assets === undefined) throw invalidArgs("redeploy needs at least one of html, manifest or assets");
    if (!dryRun && (args.slug !== undefined || args.visibility !== undefined)) throw invalidArgs("slug and visibility cannot change on redeploy; use the apps tool, action update");
    return relay(host, {
      method: "POST", path: `/v1/apps/${seg(args.app_id)}/versions`,
      body: present({ html: args.html, manifest, dry_run: dryRun ? true : undefined, force: args.force, assets: args.assets }),
    });
  },
});
