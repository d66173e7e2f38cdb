// `service template upgrade-check|upgrade|revert <app>`: template upgrades of an app you
// installed (GET/POST /v1/apps/:id/upgrade, POST …/upgrade/revert). upgrade-check prints
// the preview (available, versions, changelog, compat, breaks, permission lines); upgrade
// applies the newest listed version (--expect-version pins it, --accept-permissions is
// needed when it asks for more); revert goes back to the version before the last upgrade.
import { boolFlag, stringFlag } from "../../argv.ts";
import type { Command } from "../types.ts";
import { APP_ARG, target } from "../apps/common.ts";

export const templateUpgradeCheck: Command = {
  noun: "template",
  verb: "upgrade-check",
  summary: "is a newer version of the app's template listed, and would it apply cleanly",
  flags: [],
  args: [APP_ARG],
  examples: ["service template upgrade-check my-todo"],
  skillCheck: true,
  async run(ctx) {
    const t = await target(ctx, ctx.args[0]);
    ctx.out.json(await t.relay.object("GET", `${t.path}/upgrade`, { auth: t.auth }));
  },
};

export const templateUpgrade: Command = {
  noun: "template",
  verb: "upgrade",
  summary: "upgrade the app in place to its template's newest listed version",
  description: "Refused when live rows would be stranded. When the new version asks for more (hosts, embeds,\ncapabilities, webhook targets, wider reach), --accept-permissions is required; run upgrade-check first to see it.",
  flags: [
    { name: "expect-version", kind: "string", value: "<semver>", description: "refuse unless this is still the version on offer" },
    { name: "accept-permissions", kind: "boolean", description: "accept what the new version asks for beyond the current one" },
  ],
  args: [APP_ARG],
  examples: ["service template upgrade my-todo --expect-version 1.1.0", "service template upgrade my-todo --accept-permissions"],
  skillCheck: true,
  async run(ctx) {
    const expected = stringFlag(ctx.flags, "expect-version");
    const body = {
      ...(boolFlag(ctx.flags, "accept-permissions") ? { accept_permissions: true } : {}),
      ...(expected !== undefined ? { expect_version: expected } : {}),
    };
    const t = await target(ctx, ctx.args[0]);
    ctx.out.json(await t.relay.object("POST", `${t.path}/upgrade`, { auth: t.auth, body }));
  },
};

export const templateRevert: Command = {
  noun: "template",
  verb: "revert",
  summary: "return the app to the version before its last template upgrade",
  flags: [],
  args: [APP_ARG],
  examples: ["service template revert my-todo"],
  skillCheck: true,
  async run(ctx) {
    const t = await target(ctx, ctx.args[0]);
    ctx.out.json(await t.relay.object("POST", `${t.path}/upgrade/revert`, { auth: t.auth, body: {} }));
  },
};
