/**
 * The `apps` tool (WIRE-MCP §2.11): an app's lifecycle apart from deploy — list, show,
 * audit, settings, the share link, trash, restore, purge, wake and custom domains — each
 * action one `/v1` app route. Custom domains answer not_implemented until the relay has them.
 */
import * as z from "zod";
import { byAction, defineTool, hints, need, present, relay, type ToolDef } from "../define";
import { seg } from "../relay-call";

const input = z.strictObject({
  action: z.enum(["list", "show", "audit", "update", "share_link_rotate", "delete", "list_deleted", "restore", "purge", "wake", "domain_set", "domain_status", "domain_remove"]),
  app_id: z.string().optional(),
  cursor: z.string().optional(),
  slug: z.string().optional(),
  timezone: z.string().optional(),
  domain: z.string().optional(),
  status: z.enum(["active", "dormant", "archived", "suspended", "all"]).optional(),
  limit: z.number().int().min(1).max(200).optional(),
  severity: z.enum(["high", "medium", "low"]).optional(),
  visibility: z.enum(["private", "link", "public"]).optional(),
});
type Args = z.infer<typeof input>;

const appPath = (args: Args, action: string, suffix = "") => {
  need(args, action, "app_id");
  return `/v1/apps/${seg(args.app_id!)}${suffix}`;
};

export const appsTool: ToolDef = defineTool({
  name: "apps", annotations: hints("Manage Apps", "F", "T", "F", "F"),
  description: "Manage your apps: list (status, slug, limit, cursor), show, audit (advisories), update (visibility, timezone), share_link_rotate, delete (to the trash, data kept), list_deleted, restore, purge (irreversible; deleted apps only), wake, domain_set, domain_status, domain_remove. app_id must be the id, not the slug.",
  input,
  run: byAction<Args>("apps", {
    list: (args, host) => relay(host, { method: "GET", path: "/v1/apps", query: { status: args.status, limit: args.limit, cursor: args.cursor, slug: args.slug } }),
    show: (args, host) => relay(host, { method: "GET", path: appPath(args, "show") }),
    audit: (args, host) => relay(host, { method: "GET", path: "/v1/apps/advisories", query: { severity: args.severity } }),
    update: (args, host) => {
      const path = appPath(args, "update");
      if (args.visibility === undefined && args.timezone === undefined) need(args, "update", "visibility");
      return relay(host, { method: "PATCH", path, body: present({ visibility: args.visibility, timezone: args.timezone }) });
    },
    share_link_rotate: (args, host) => relay(host, { method: "POST", path: appPath(args, "share_link_rotate", "/share-link/rotate"), body: {} }),
    delete: async (args, host) => {
      await relay(host, { method: "DELETE", path: appPath(args, "delete") });
      return { app_id: args.app_id, deleted: true, restorable: true };
    },
    list_deleted: (args, host) => relay(host, { method: "GET", path: "/v1/apps", query: { status: "deleted", limit: args.limit, cursor: args.cursor } }),
    restore: (args, host) => relay(host, { method: "POST", path: appPath(args, "restore", "/restore") }),
    purge: async (args, host) => {
      await relay(host, { method: "POST", path: appPath(args, "purge", "/purge") });
      return { app_id: args.app_id, purged: true };
    },
    wake: (args, host) => relay(host, { method: "POST", path: appPath(args, "wake", "/wake") }),
    domain_set: (args, host) => {
      const path = appPath(args, "domain_set", "/domain");
      need(args, "domain_set", "domain");
      return relay(host, { method: "POST", path, body: { domain: args.domain } });
    },
    domain_status: (args, host) => relay(host, { method: "GET", path: appPath(args, "domain_status", "/domain") }),
    domain_remove: async (args, host) => {
      await relay(host, { method: "DELETE", path: appPath(args, "domain_remove", "/domain"), query: { domain: args.domain } });
      return { app_id: args.app_id, domain_removed: args.domain ?? "all" };
    },
  }),
});
