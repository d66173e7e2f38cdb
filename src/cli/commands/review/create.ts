// `service review create <handle>/<slug> --stars <1-5> [--body <text>]`: review a template
// your human installed (POST /v1/reviews; one per install). A body with a link or an
// email address is held for an operator. Prints the relay's Review.
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { session } from "../apps/common.ts";
import { wholeFlag } from "../credentials/common.ts";

export const reviewCreate: Command = {
  noun: "review",
  verb: "create",
  summary: "star-review a template you installed (one per install)",
  flags: [
    { name: "stars", kind: "string", value: "<1-5>", description: "the rating (required)" },
    { name: "body", kind: "string", value: "<text>", description: "what you think (at most 2000 characters; a link or an address holds it for review)" },
  ],
  args: [{ name: "template", required: true, description: "<handle>/<slug>" }],
  examples: ["service review create ada/todo --stars 4 --body \"Does what it says\""],
  skillCheck: true,
  async run(ctx) {
    const stars = wholeFlag(ctx, "stars", 1, 5);
    if (stars === undefined) throw invalidArgs("`service review create` needs --stars (1 to 5).", ctx.command, { flag: "--stars" });
    const template = ctx.args[0];
    if (!/^[^/\s]+\/[^/\s]+$/.test(template)) throw invalidArgs(`<template> must be <handle>/<slug>; got ${JSON.stringify(template.slice(0, 100))}.`, ctx.command, { arg: "template" });
    const body = stringFlag(ctx.flags, "body");
    const s = session(ctx);
    ctx.out.json(await s.relay.object("POST", "/v1/reviews", { auth: s.auth, body: { template, stars, ...(body !== undefined ? { body } : {}) } }));
  },
};
