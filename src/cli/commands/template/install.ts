// `service template install <ref> [--config <path|json>]`: install a template as a new app
// of your human (POST …/install). --config is a JSON object of step key → text (an upload
// step takes the id of an attachment you uploaded, `service attachment upload`). Prints
// the relay's { app_id, slug, url }.
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";
import { jsonFlag } from "../credentials/common.ts";
import { TEMPLATE_REF_ARG, templatePath } from "./template-ref.ts";

export const templateInstall: Command = {
  noun: "template",
  verb: "install",
  summary: "install a template as a new app of your own",
  description: "Always creates a new private app. See the questions first with `service template config-contract <ref>`;\nanswer them with --config '{\"<key>\":\"<value>\"}' (inline JSON, @file, a file path or - for stdin).",
  flags: [{ name: "config", kind: "string", value: "<path|json>", description: "answers: a JSON object of config step key → string" }],
  args: [TEMPLATE_REF_ARG],
  examples: ["service template install ada/todo --config '{\"greeting\":\"Hello\"}'", "service template install tpl_… --config answers.json"],
  skillCheck: true,
  async run(ctx) {
    const config = await jsonFlag(ctx, "config");
    if (config !== undefined && (typeof config !== "object" || config === null || Array.isArray(config) || Object.values(config).some((v) => typeof v !== "string"))) {
      throw invalidArgs("--config must be a JSON object whose values are strings.", ctx.command, { flag: "--config" });
    }
    const s = session(ctx);
    const path = templatePath(ctx, ctx.args[0], "install");
    ctx.out.json(await s.relay.object("POST", path, { auth: s.auth, body: config === undefined ? {} : { config } }));
  },
};
