// `service credentials mint --app <app> [--mode explicit|following] [--grants <json>]
// [--label] [--ttl <seconds> | --no-expiry] [--members]`: POST /v1/apps/:id/credentials.
// Prints the relay's answer, whose `token` is shown this once.
import { boolFlag, stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import { oneOf } from "../apps/common.ts";
import type { Command } from "../types.ts";
import { APP_FLAG, appTarget, jsonFlag, wholeFlag } from "./common.ts";

export const credentialsMint: Command = {
  noun: "credentials",
  verb: "mint",
  summary: "mint a service credential for a backend (token printed once)",
  description:
    "The token is a bearer for the app's collection endpoints only, within its allowlist and the owner's authority. " +
    "--grants is a JSON array of { collection, ops: [read|create|update|delete], scope?: \"own\" }. " +
    "explicit (default) denies collections it does not name; following lets them fall to the owner's authority. " +
    "Lifetime: 365 days by default (clamped by the relay); --no-expiry for none.",
  flags: [
    APP_FLAG,
    { name: "mode", kind: "string", value: "<explicit|following>", description: "how unnamed collections are treated (default explicit)" },
    { name: "grants", kind: "string", value: "<json|@file|->", description: "the allowlist: [{ collection, ops, scope? }]" },
    { name: "label", kind: "string", value: "<text>", description: "a name to recognise it by" },
    { name: "ttl", kind: "string", value: "<seconds>", description: "lifetime in seconds (default 365 days)" },
    { name: "no-expiry", kind: "boolean", description: "never expires (not with --ttl)" },
    { name: "members", kind: "boolean", description: "also allow reading the member directory" },
  ],
  args: [],
  examples: [
    `service credentials mint --app my-app --grants '[{"collection":"orders","ops":["read"]}]' --label shop-backend`,
    "service credentials mint --app my-app --mode following --no-expiry",
  ],
  skillCheck: true,
  async run(ctx) {
    const mode = oneOf(ctx, "mode", ["explicit", "following"]);
    const ttl = wholeFlag(ctx, "ttl", 1);
    const noExpiry = boolFlag(ctx.flags, "no-expiry");
    if (ttl !== undefined && noExpiry) throw invalidArgs("--ttl and --no-expiry are mutually exclusive.", ctx.command, { flag: "--no-expiry" });
    const grants = await jsonFlag(ctx, "grants");
    if (grants !== undefined && !Array.isArray(grants)) {
      throw invalidArgs("--grants must be a JSON array of { collection, ops, scope? }.", ctx.command, { flag: "--grants" });
    }
    const label = stringFlag(ctx.flags, "label");
    const body = {
      ...(mode !== undefined ? { mode } : {}),
      ...(grants !== undefined ? { grants } : {}),
      ...(label !== undefined ? { label } : {}),
      ...(ttl !== undefined ? { ttl_seconds: ttl } : {}),
      ...(noExpiry ? { ttl_seconds: null } : {}),
      ...(boolFlag(ctx.flags, "members") ? { members: true } : {}),
    };
    const t = await appTarget(ctx);
    ctx.out.json(await t.relay.object("POST", `${t.path}/credentials`, { auth: t.auth, body }));
  },
};
