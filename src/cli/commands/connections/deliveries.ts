// `service connections deliveries --app <app> [--status …] [--collection …] [--limit n]`:
// GET /v1/apps/:id/webhooks/deliveries — the outbound webhook journal, newest first, each
// delivery with its attempts' outcome (WIRE §2.6). Prints the relay's `{ deliveries }`.
import { stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import type { Command } from "../types.ts";
import { oneOf, query } from "../apps/common.ts";
import { wholeFlag } from "../credentials/common.ts";
import { APP_FLAG, appTarget } from "./common.ts";

export const connectionsDeliveries: Command = {
  noun: "connections",
  verb: "deliveries",
  summary: "list the app's outbound webhook deliveries, newest first",
  description: "Each delivery is { id, collection, rowKey, op, url, status, attempts, responseStatus, responseBody,\npayload, payloadTruncated, error, replayOfId, createdAt, deliveredAt, lastAttemptAt }. Re-send one\nwith `service connections replay`.",
  flags: [
    APP_FLAG,
    { name: "status", kind: "string", value: "pending|delivered|failed", description: "only deliveries in this state" },
    { name: "collection", kind: "string", value: "<name>", description: "only deliveries of this collection's rules" },
    { name: "limit", kind: "string", value: "<n>", description: "how many (default 25, at most 100)" },
  ],
  args: [],
  examples: ["service connections deliveries --app my-app --status failed"],
  skillCheck: true,
  async run(ctx) {
    const status = oneOf(ctx, "status", ["pending", "delivered", "failed"]);
    const limit = wholeFlag(ctx, "limit", 1, 100);
    const collection = stringFlag(ctx.flags, "collection");
    if (collection !== undefined && collection.trim() === "") throw invalidArgs("--collection needs a collection name.", ctx.command, { flag: "--collection" });
    const t = await appTarget(ctx);
    const path = `${t.path}/webhooks/deliveries${query({ status, collection, limit: String(limit ?? 25) })}`;
    ctx.out.json(await t.relay.object("GET", path, { auth: t.auth }));
  },
};
