// What the `members` verbs share (spec C: every one takes `--app <id|slug>`): the
// required flags, the app resolved to an id (WIRE §1.5), and its members path.
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { CommandContext } from "../types.ts";
import { target, type Target } from "../apps/common.ts";

export const APP_FLAG = { name: "app", kind: "string" as const, value: "<app>", description: "the app's id or slug (required)" };
export const HUMAN_FLAG = { name: "human", kind: "string" as const, value: "<humanId>", description: "the member's humanId, from `service members list` (required)" };

/** A string flag the verb cannot run without. */
export function requiredFlag(ctx: CommandContext, name: string): string {
  const value = stringFlag(ctx.flags, name);
  if (value === undefined) throw invalidArgs(`The flag --${name} is required.`, ctx.command, { flag: `--${name}` });
  return value;
}

/** The session plus `--app` resolved to an id; `path` is `/v1/apps/<id>`. */
export function appTarget(ctx: CommandContext): Promise<Target> {
  return target(ctx, requiredFlag(ctx, "app"));
}

/** `/v1/apps/<id>/members/<humanId>`. */
export function memberPath(t: Target, humanId: string): string {
  return `${t.path}/members/${encodeURIComponent(humanId)}`;
}
