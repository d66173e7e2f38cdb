// `service grants mint --app <app> --role <role> [--mode once|multi] [--max-uses <n>]
// [--label] [--ttl <seconds>] [--pin-row <key> | --pin-where <json>]`: POST
// /v1/apps/:id/grants. Prints the relay's answer; its grant_url (the token in #g=) is
// shown this once.
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import { oneOf } from "../apps/common.ts";
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget, jsonFlag, requiredFlag, wholeFlag } from "../credentials/common.ts";

export const grantsMint: Command = {
  noun: "grants",
  verb: "mint",
  summary: "mint a grant link for a custom role (grant_url printed once)",
  description:
    "The role must be a custom role the manifest declares. A once link is claimed by the first browser that opens it; " +
    "a multi link (default) admits new browsers up to --max-uses. --pin-row narrows the holder to one row key, " +
    "--pin-where to rows matching a JSON array of { field, op, value }. Lifetime: 30 days by default (clamped by the relay).",
  flags: [
    APP_FLAG,
    { name: "role", kind: "string", value: "<role>", description: "a declared custom role (required)" },
    { name: "mode", kind: "string", value: "<once|multi>", description: "once: first browser only; multi (default): many" },
    { name: "max-uses", kind: "string", value: "<n>", description: "how many browsers a multi link admits" },
    { name: "label", kind: "string", value: "<text>", description: "a name to recognise it by" },
    { name: "ttl", kind: "string", value: "<seconds>", description: "lifetime in seconds (default 30 days)" },
    { name: "pin-row", kind: "string", value: "<key>", description: "pin the holder to one row key" },
    { name: "pin-where", kind: "string", value: "<json|@file|->", description: "pin the holder to rows matching [{ field, op, value }]" },
  ],
  args: [],
  examples: [
    "service grants mint --app my-app --role reviewer --mode once --label 'for Sam'",
    `service grants mint --app my-app --role guest --pin-where '[{"field":"project","op":"eq","value":"alpha"}]'`,
  ],
  skillCheck: true,
  async run(ctx) {
    const role = requiredFlag(ctx, "role");
    const mode = oneOf(ctx, "mode", ["once", "multi"]);
    const maxUses = wholeFlag(ctx, "max-uses", 1);
    const ttl = wholeFlag(ctx, "ttl", 1);
    const pinRow = stringFlag(ctx.flags, "pin-row");
    const pinWhere = await jsonFlag(ctx, "pin-where");
    if (pinRow !== undefined && pinWhere !== undefined) throw invalidArgs("--pin-row and --pin-where are mutually exclusive.", ctx.command, { flag: "--pin-where" });
    if (pinWhere !== undefined && !Array.isArray(pinWhere)) {
      throw invalidArgs("--pin-where must be a JSON array of { field, op, value }.", ctx.command, { flag: "--pin-where" });
    }
    const label = stringFlag(ctx.flags, "label");
    const body = {
      role,
      ...(mode !== undefined ? { mode } : {}),
      ...(maxUses !== undefined ? { max_uses: maxUses } : {}),
      ...(label !== undefined ? { label } : {}),
      ...(ttl !== undefined ? { ttl_seconds: ttl } : {}),
      ...(pinRow !== undefined ? { pin: { row_key: pinRow } } : {}),
      ...(pinWhere !== undefined ? { pin: { where: pinWhere } } : {}),
    };
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("POST", `${t.path}/grants`, { auth: t.auth, body }));
  },
};
