// `service key revoke --yes`: revoke the key in use (DELETE /v1/keys/<agent_id>, the id
// read from GET /v1/keys). Irreversible, so it refuses without --yes; afterwards every
// call with that key fails with invalid_api_key.
import { boolFlag } from "../../argv.ts";
import { CliError } from "../../errors.ts";
import { requireKey } from "../../context.ts";
import type { Command } from "../types.ts";

export const keyRevoke: Command = {
  noun: "key",
  verb: "revoke",
  summary: "revoke the key you are using (needs --yes); later calls with it fail",
  flags: [{ name: "yes", kind: "boolean", description: "confirm the revocation" }],
  args: [],
  examples: ["service key revoke --yes"],
  skillCheck: false,
  async run(ctx) {
    if (!boolFlag(ctx.flags, "yes")) {
      throw new CliError("confirmation_required", "Revoking your key makes every later command with it fail.", {
        hint: "Run `service key revoke --yes` if you really mean it.",
      });
    }
    const resolved = ctx.resolve();
    const key = requireKey(resolved);
    const relay = ctx.relay(resolved.url);
    const own = await relay.object("GET", "/v1/keys", { auth: { kind: "key", key } });
    if (typeof own.agent_id !== "string") {
      throw new CliError("invalid_response", "GET /v1/keys answered without an agent_id.", { hint: "Check that --url points at a relay." });
    }
    await relay.json("DELETE", `/v1/keys/${encodeURIComponent(own.agent_id)}`, { auth: { kind: "key", key } });
    ctx.out.json({ revoked: true, agent_id: own.agent_id });
  },
};
