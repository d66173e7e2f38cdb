// `service ingest signing-secret <set|clear> --app <app> --name <hook> [--secret <value|->]
// [--grace-seconds <n>]`: PUT or DELETE …/ingest-hooks/:name/signing-secret (WIRE §2.7).
// `set` without a secret (flag or SERVICE_INGEST_SIGNING_SECRET) has the relay mint one
// (`ihk_…`, printed once); the previous secret keeps verifying for --grace-seconds
// (default 3600, at most 86400). `clear` removes current, previous and grace; a hook whose
// rule verifies signatures then refuses every delivery.
import { invalidArgs } from "../../errors.ts";
import { wholeFlag } from "../credentials/common.ts";
import { secretFlag } from "../connections/common.ts";
import type { Command } from "../types.ts";
import { APP_FLAG, NAME_FLAG, appTarget, hookName, hookPath } from "./common.ts";

const GRACE_MAX_SECONDS = 86_400;

export const ingestSigningSecret: Command = {
  noun: "ingest",
  verb: "signing-secret",
  summary: "set (minted or supplied) or clear a hook's signing secret",
  description: "set: without --secret or SERVICE_INGEST_SIGNING_SECRET the relay mints one and prints it once as { secret, fingerprint, setAt };\nwith one it prints { fingerprint, setAt }. The previous secret keeps verifying for --grace-seconds.\nclear: prints { ok: true }; idempotent.",
  flags: [
    APP_FLAG, NAME_FLAG,
    { name: "secret", kind: "string", value: "<value|->", description: "set: the secret to use (- reads stdin); default: SERVICE_INGEST_SIGNING_SECRET, else the relay mints one" },
    { name: "grace-seconds", kind: "string", value: "<n>", description: "set: how long the previous secret still verifies (default 3600, at most 86400)" },
  ],
  args: [{ name: "action", required: true, description: "set or clear" }],
  examples: [
    "service ingest signing-secret set --app my-app --name github",
    "printenv GH_SECRET | service ingest signing-secret set --app my-app --name github --secret -",
    "service ingest signing-secret clear --app my-app --name github",
  ],
  skillCheck: true,
  async run(ctx) {
    const action = ctx.args[0];
    if (action !== "set" && action !== "clear") throw invalidArgs(`\`${ctx.command}\` takes set or clear; got ${JSON.stringify(action ?? "")}.`, ctx.command);
    const name = hookName(ctx);
    if (action === "clear") {
      for (const flag of ["secret", "grace-seconds"]) {
        if (ctx.flags[flag] !== undefined) throw invalidArgs(`--${flag} only goes with set.`, ctx.command, { flag: `--${flag}` });
      }
      const t = await appTarget(ctx);
      ctx.out.json(await t.relay.object("DELETE", `${hookPath(t, name)}/signing-secret`, { auth: t.auth }));
      return;
    }
    const graceSeconds = wholeFlag(ctx, "grace-seconds", 0, GRACE_MAX_SECONDS);
    const secret = await secretFlag(ctx, "secret", "SERVICE_INGEST_SIGNING_SECRET", "signing secret");
    const t = await appTarget(ctx);
    const body = { ...(secret !== undefined ? { secret } : {}), ...(graceSeconds !== undefined ? { graceSeconds } : {}) };
    ctx.out.json(await t.relay.object("PUT", `${hookPath(t, name)}/signing-secret`, { auth: t.auth, body }));
  },
};
