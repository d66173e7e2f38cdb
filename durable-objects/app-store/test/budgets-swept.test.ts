// The anonymous write budgets (`_svc_anon_budget`: one counter per collection, caller and
// UTC day) stay bounded: the store's sweep drops the counters of past days, which nothing
// reads any more, and keeps today's, so a caller's spent budget still holds until the day
// turns. Before, the table kept one row per anonymous caller and day for good.
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { setup } from "../../../test/worker/rows/fixtures";

vi.setConfig({ testTimeout: 30_000 });

const DAY_MS = 86_400_000;
const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);

describe("anonymous write budgets", () => {
  it("the sweep drops past days' counters and keeps today's", async () => {
    const ctx = await setup();
    const today = dayOf(Date.now());
    const pastDays = [dayOf(Date.now() - DAY_MS), dayOf(Date.now() - 40 * DAY_MS)];
    await ctx.sql((sql) => {
      for (const day of [today, ...pastDays]) {
        for (const subject of ["198.18.1.1", "198.18.1.2", "app"]) {
          sql.exec("INSERT INTO _svc_anon_budget (collection, scope, subject, day, used) VALUES ('free', ?, ?, ?, 3)",
            subject === "app" ? "perAppPerDay" : "perIpPerDay", subject, day);
        }
      }
    });
    // A soft delete arms the sweep.
    const row = await ctx.create("free", { n: 1 });
    await ctx.remove("free", row.key);
    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);
    const left = await ctx.sql((sql) => sql.exec<{ day: string; subject: string; used: number }>(
      "SELECT day, subject, used FROM _svc_anon_budget ORDER BY subject",
    ).toArray());
    expect(left).toEqual([
      { day: today, subject: "198.18.1.1", used: 3 },
      { day: today, subject: "198.18.1.2", used: 3 },
      { day: today, subject: "app", used: 3 },
    ]);
  });
});
