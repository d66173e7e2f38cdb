// `service attachment token mint <id> [--ttl <seconds>] [--once]` / `revoke <id> <token-id>` /
// `list <id>`: the /b/<token> capability URLs of an attachment (WIRE §2.9). One verb with a
// sub-action, like `ingest signing-secret set|clear`; each prints the relay's answer.
import { boolFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import { wholeFlag } from "../credentials/common.ts";
import type { Command } from "../types.ts";
import { attachmentId, attachmentPath, session } from "./common.ts";

const ACTIONS = ["mint", "revoke", "list"];

export const attachmentToken: Command = {
  noun: "attachment",
  verb: "token",
  summary: "capability URLs: token mint <id> [--ttl] [--once] | revoke <id> <token-id> | list <id>",
  description: "A token opens the attachment at /b/<token> with no key. --ttl (seconds) can only shorten the default (30 days for app scope, 24 hours for agent scope); --once tokens work for one download.",
  flags: [
    { name: "ttl", kind: "string", value: "<seconds>", description: "mint: lifetime in seconds (only shortens the default)" },
    { name: "once", kind: "boolean", description: "mint: the URL works for one download" },
  ],
  args: [
    { name: "action", required: true, description: "mint, revoke or list" },
    { name: "id", required: true, description: "the attachment's id" },
    { name: "token-id", required: false, description: "revoke: the token's id" },
  ],
  examples: ["service attachment token mint att_… --once", "service attachment token list att_…", "service attachment token revoke att_… atk_…"],
  skillCheck: true,
  async run(ctx) {
    const action = ctx.args[0] ?? "";
    if (!ACTIONS.includes(action)) throw invalidArgs(`The token action must be mint, revoke or list; got ${JSON.stringify(action.slice(0, 40))}.`, ctx.command, { arg: "action" });
    const id = attachmentId(ctx, 1);
    const tokenId = ctx.args[2];
    if (action !== "mint" && (ctx.flags.ttl !== undefined || ctx.flags.once !== undefined)) {
      throw invalidArgs("--ttl and --once go with `token mint` only.", ctx.command, { flag: ctx.flags.ttl !== undefined ? "--ttl" : "--once" });
    }
    if (action === "revoke" && !tokenId) throw invalidArgs("`token revoke` needs the token's id after the attachment's.", ctx.command, { arg: "token-id" });
    if (action !== "revoke" && tokenId !== undefined) throw invalidArgs(`\`token ${action}\` takes only the attachment's id.`, ctx.command, { arg: "token-id" });
    const s = session(ctx);
    const tokens = `${attachmentPath(id)}/tokens`;
    if (action === "list") return void ctx.out.json(await s.relay.object("GET", tokens, { auth: s.auth }));
    if (action === "revoke") return void ctx.out.json(await s.relay.object("DELETE", `${tokens}/${encodeURIComponent(tokenId!)}`, { auth: s.auth }));
    const ttl = wholeFlag(ctx, "ttl", 1);
    const body = { ...(ttl !== undefined ? { ttl_seconds: ttl } : {}), ...(boolFlag(ctx.flags, "once") ? { once: true } : {}) };
    ctx.out.json(await s.relay.object("POST", tokens, { auth: s.auth, body }));
  },
};
