// `service members remove --app <app> --human <humanId>`: DELETE
// /v1/apps/:id/members/:humanId (idempotent; their app sessions stop at once; the owner
// cannot be removed). Prints `{ removed: true, app_id, human_id }` (WIRE §6.7).
import type { Command } from "../types.ts";
import { APP_FLAG, HUMAN_FLAG, appTarget, memberPath, requiredFlag } from "./common.ts";

export const membersRemove: Command = {
  noun: "members",
  verb: "remove",
  summary: "remove a member; their app sessions stop working at once",
  flags: [APP_FLAG, HUMAN_FLAG],
  args: [],
  examples: ["service members remove --app my-app --human h123"],
  skillCheck: true,
  async run(ctx) {
    const humanId = requiredFlag(ctx, "human");
    const t = await appTarget(ctx);
    await t.relay.json("DELETE", memberPath(t, humanId), { auth: t.auth });
    ctx.out.json({ removed: true, app_id: t.app.id, human_id: humanId });
  },
};
