// `service template config-contract <ref>`: what a template asks at install (GET
// …/config-contract): its settings collection, config steps (key, kind, label, required,
// secret, choices, default, value_hint) and connect steps. Prints the relay's answer.
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";
import { TEMPLATE_REF_ARG, templatePath } from "./template-ref.ts";

export const templateConfigContract: Command = {
  noun: "template",
  verb: "config-contract",
  summary: "show what a template asks at install (config and connect steps)",
  flags: [],
  args: [TEMPLATE_REF_ARG],
  examples: ["service template config-contract ada/todo", "service template config-contract tpl_…"],
  skillCheck: true,
  async run(ctx) {
    const s = session(ctx);
    ctx.out.json(await s.relay.object("GET", templatePath(ctx, ctx.args[0], "config-contract"), { auth: s.auth }));
  },
};
