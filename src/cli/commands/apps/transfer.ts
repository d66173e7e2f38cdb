// `service apps transfer <app> [--to <email>] [--keep-as-member] [--remove-me] [--show]
// [--cancel]` (spec C "apps"): offer the app's ownership to an email address (POST
// /v1/apps/:id/transfer), read the pending offer (GET) or withdraw it (DELETE). The
// recipient accepts from the mailed link; ownership moves only then, and the app's service
// credentials are revoked. A plain explanation for a person by default; the relay's
// answer as JSON with --json.
import { boolFlag, stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { Command, CommandContext } from "../types.ts";
import { APP_ARG, target } from "./common.ts";

interface Transfer {
  id: string;
  status: string;
  to_email: string;
  keep_as_member: boolean;
  created_at: string;
  expires_at: string;
  resolved_at: string | null;
}

function action(ctx: CommandContext): "offer" | "show" | "cancel" {
  const to = stringFlag(ctx.flags, "to");
  const chosen = [to !== undefined && "--to", boolFlag(ctx.flags, "show") && "--show", boolFlag(ctx.flags, "cancel") && "--cancel"].filter(Boolean);
  if (chosen.length !== 1) {
    throw invalidArgs(chosen.length ? `Use one of ${chosen.join(", ")}, not several.` : "Name what to do: --to <email> to offer the app, --show to see the pending offer, --cancel to withdraw it.", ctx.command);
  }
  const keep = boolFlag(ctx.flags, "keep-as-member");
  const removeMe = boolFlag(ctx.flags, "remove-me");
  if (keep && removeMe) throw invalidArgs("--keep-as-member and --remove-me contradict each other; give one (keeping you as a member is the default).", ctx.command, { flag: "--remove-me" });
  if ((keep || removeMe) && to === undefined) throw invalidArgs(`${keep ? "--keep-as-member" : "--remove-me"} goes with --to <email>.`, ctx.command, { flag: keep ? "--keep-as-member" : "--remove-me" });
  return chosen[0] === "--to" ? "offer" : chosen[0] === "--show" ? "show" : "cancel";
}

function afterwards(t: Transfer): string {
  const you = t.keep_as_member ? "You stay on the app as a member afterwards." : "You will no longer be on the app afterwards.";
  return `${you} Accepting revokes the app's service credentials; grant links keep working.`;
}

export const appsTransfer: Command = {
  noun: "apps",
  verb: "transfer",
  summary: "offer an app's ownership to an email address; --show the pending offer, --cancel it",
  description: [
    "--to <email> mails that address a single-use link (7 days); ownership moves only when they accept it, signed in as that address.",
    "Keeping you as a member is the default; --remove-me takes you off the app when they accept. One offer per app: --cancel the pending one first.",
    "Accepting revokes every service credential of the app (backends using them are refused; the new owner mints their own); grant links keep working.",
    "Prints a plain explanation by default and the relay's JSON answer with --json.",
  ].join("\n"),
  flags: [
    { name: "to", kind: "string", value: "<email>", description: "offer the app to this address" },
    { name: "keep-as-member", kind: "boolean", description: "stay on the app as a member after the transfer (the default)" },
    { name: "remove-me", kind: "boolean", description: "leave the app when the recipient accepts" },
    { name: "show", kind: "boolean", description: "show the pending offer, if any" },
    { name: "cancel", kind: "boolean", description: "withdraw the pending offer; its link stops working at once" },
  ],
  args: [APP_ARG],
  examples: ["service apps transfer my-app --to new-owner@example.com", "service apps transfer my-app --to new-owner@example.com --remove-me", "service apps transfer my-app --show", "service apps transfer my-app --cancel --json"],
  skillCheck: true,
  async run(ctx) {
    const what = action(ctx);
    const t = await target(ctx, ctx.args[0]);
    const path = `${t.path}/transfer`;
    const name = ctx.args[0];
    const answer = what === "offer"
      ? await t.relay.object("POST", path, { auth: t.auth, body: { email: stringFlag(ctx.flags, "to"), keep_as_member: !boolFlag(ctx.flags, "remove-me") } })
      : await t.relay.object(what === "show" ? "GET" : "DELETE", path, { auth: t.auth });
    if (boolFlag(ctx.flags, "json")) return ctx.out.json(answer);
    const transfer = answer.transfer as Transfer | null;
    if (!transfer) return ctx.out.text(`No transfer of ${name} is pending.`);
    if (what === "offer") {
      ctx.out.text([
        `Offered ${name} to ${transfer.to_email}. They were mailed a link that works once, until ${transfer.expires_at}.`,
        `Ownership moves only when they accept it, signed in as that address. ${afterwards(transfer)}`,
        `Withdraw the offer with: service apps transfer ${name} --cancel`,
      ].join("\n"));
    } else if (what === "show") {
      ctx.out.text([
        `${name} is offered to ${transfer.to_email} (since ${transfer.created_at}; the link works until ${transfer.expires_at}).`,
        `Ownership moves only when they accept it. ${afterwards(transfer)}`,
        `Withdraw the offer with: service apps transfer ${name} --cancel`,
      ].join("\n"));
    } else {
      ctx.out.text(`Withdrew the offer of ${name} to ${transfer.to_email}; its link no longer works. You still own the app.`);
    }
  },
};
