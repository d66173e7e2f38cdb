// The <ref> of the install verbs: `<handle>/<slug>` or a snapshot id (tpl_…), turned into
// the relay path. A handle/slug ref goes as TWO path segments, each URL-encoded (WIRE
// §2.10), so a decoded %2F can never reroute the call.
import type { ArgSpec } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { CommandContext } from "../types.ts";

export const TEMPLATE_REF_ARG: ArgSpec = { name: "ref", required: true, description: "<handle>/<slug>, or a snapshot id (tpl_…)" };

export function templatePath(ctx: CommandContext, ref: string, action: "config-contract" | "install"): string {
  const parts = ref.split("/");
  if (parts.length > 2 || parts.some((part) => part.trim() === "")) {
    throw invalidArgs(`<ref> must be <handle>/<slug> or a snapshot id; got ${JSON.stringify(ref.slice(0, 100))}.`, ctx.command, { arg: "ref" });
  }
  return `/v1/community/templates/${parts.map(encodeURIComponent).join("/")}/${action}`;
}
