// `service data <app> <collection> purge <key> --yes` (or `--key <key>`): destroys a
// live or deleted row's data for good (DELETE …/:key/purge); owner and agent only.
// Without --yes it refuses with confirmation_required and touches nothing. Prints
// { purged: true, key } (WIRE §6.7).
import { boolFlag } from "../../argv.ts";
import { CliError } from "../../errors.ts";
import { rowPath, type DataVerb } from "./common.ts";
import { YES_FLAG } from "./delete.ts";

export const dataPurge: DataVerb = {
  verb: "purge",
  usage: "purge <key> --yes | purge --key <key> --yes",
  summary: "destroy a row for good (needs --yes): { purged: true, key }",
  key: "arg-or-flag",
  flags: [{ name: "key", kind: "string", value: "<key>", description: "restore, purge: the row (instead of the argument)" }, YES_FLAG],
  async run(ctx) {
    if (!boolFlag(ctx.flags, "yes")) {
      throw new CliError("confirmation_required", `Purging destroys the row's data for good; it cannot be restored. Run \`${ctx.line} ${ctx.key} --yes\` if you mean it.`, {
        hint: "A soft delete (`delete <key>`) can be undone with `restore`; purge cannot.",
      });
    }
    const t = await ctx.open();
    await t.relay.json("DELETE", rowPath(t.base, ctx.key, "/purge"), { auth: t.auth });
    ctx.out.json({ purged: true, key: ctx.key });
  },
};
