// `service taste clear --yes`: remove your taste notes (DELETE /v1/taste, idempotent).
// The notes cannot be brought back, so it refuses without --yes.
import { boolFlag } from "../../argv.ts";
import { CliError } from "../../errors.ts";
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";

export const tasteClear: Command = {
  noun: "taste",
  verb: "clear",
  summary: "remove your taste notes (needs --yes)",
  flags: [{ name: "yes", kind: "boolean", description: "confirm removing the notes" }],
  args: [],
  examples: ["service taste clear --yes"],
  skillCheck: true,
  async run(ctx) {
    if (!boolFlag(ctx.flags, "yes")) {
      throw new CliError("confirmation_required", "Clearing removes your taste notes for good.", { hint: "Run `service taste clear --yes` if you mean it." });
    }
    const s = session(ctx);
    await s.relay.json("DELETE", "/v1/taste", { auth: s.auth });
    ctx.out.json({ cleared: true });
  },
};
