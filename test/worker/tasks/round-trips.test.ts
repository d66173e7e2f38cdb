// How many trips to D1 a worker's claim → ack costs, counted on the real binding: a claim
// with nothing to hand out is one batch, a claim that leases tasks two (settle and count,
// then lease and read the slugs), an ack or an extend-lease one statement. What they hand
// back and refuse is the same as before they were merged: the envelope, the owner's view,
// and the precise refusal when the lease is gone (read only then).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectError } from "../helpers";
import { claimTasks } from "../../../src/effects/tasks/claim";
import { ackTask, extendLease } from "../../../src/effects/tasks/finish";
import { RelayError } from "../../../src/errors";
import { countingD1 } from "../counting-d1";
import { ack, expectEnvelope, ownerTasks, taskApp, tasksIn, write } from "./helpers";

/** The test's environment with D1 counted. */
function counted(): { env: Env; d1: ReturnType<typeof countingD1> } {
  const d1 = countingD1();
  return { env: { ...env, DB: d1.DB } as Env, d1 };
}

/** The refusal `work` throws, as its code and details. */
async function refusal(work: Promise<unknown>): Promise<{ code: string; details: unknown }> {
  const err = await work.then(() => null, (caught: unknown) => caught);
  expect(err).toBeInstanceOf(RelayError);
  return { code: (err as RelayError).code, details: (err as RelayError).details };
}

describe("agent task round trips to D1", { timeout: 60_000 }, () => {
  it("a claim is one batch when nothing is claimable and two when it leases; an ack and an extend-lease are one statement", async () => {
    const t = await taskApp();
    const scope = { ownerHumanId: t.human.humanId, appIds: [t.appId], leasedBy: "agt_round_trips" };

    const idle = counted();
    expect(await claimTasks(idle.env, scope, 10)).toEqual([]);
    expect(idle.d1.roundTrips()).toBe(1);

    for (let i = 0; i < 3; i++) await write(t, "issues", { title: `issue ${i}` }, `r${i}`);
    await tasksIn(t, "queued", 3);
    const claiming = counted();
    const tasks = await claimTasks(claiming.env, scope, 2);
    expect(claiming.d1.roundTrips()).toBe(2);
    expect(tasks).toHaveLength(2);
    for (const task of tasks) {
      expectEnvelope(task);
      expect(task).toMatchObject({ app_id: t.appId, app_slug: t.slug, task_type: "summarise", collection: "issues" });
    }
    expect(new Set(tasks.map((task) => task.row_key)).size).toBe(2);

    const extending = counted();
    const extended = await extendLease(extending.env, t.human.humanId, tasks[0].task_id, 600);
    expect(extending.d1.roundTrips()).toBe(1);
    expect(Date.parse(extended.lease_expires_at)).toBeGreaterThan(Date.now() + 590_000);
    const byDefault = await extendLease(env, t.human.humanId, tasks[0].task_id, undefined);
    expect(Date.parse(byDefault.lease_expires_at)).toBeLessThan(Date.parse(extended.lease_expires_at));

    const acking = counted();
    expect(await ackTask(acking.env, t.human.humanId, tasks[0].task_id, "done here")).toEqual({ task_id: tasks[0].task_id, status: "done" });
    expect(acking.d1.roundTrips()).toBe(1);
    const view = (await ownerTasks(t)).find((task) => task.task_id === tasks[0].task_id);
    expect(view).toMatchObject({ status: "done", report: "done here", lease_expires_at: null });

    // Refusals read the task to say why: gone, not leased, another owner's.
    const again = counted();
    expect(await refusal(ackTask(again.env, t.human.humanId, tasks[0].task_id, null))).toEqual({
      code: "task_not_leased", details: { task_id: tasks[0].task_id, status: "done" },
    });
    expect(again.d1.roundTrips()).toBe(2);
    expect(await refusal(extendLease(env, t.human.humanId, tasks[0].task_id, 60))).toEqual({
      code: "task_not_leased", details: { task_id: tasks[0].task_id, status: "done" },
    });
    const stranger = await taskApp();
    expect((await refusal(ackTask(env, stranger.human.humanId, tasks[1].task_id, null))).code).toBe("task_not_found");
    expect((await refusal(extendLease(env, stranger.human.humanId, tasks[1].task_id, 60))).code).toBe("task_not_found");
    expect((await ownerTasks(t)).find((task) => task.task_id === tasks[1].task_id)).toMatchObject({ status: "leased" });

    // A lease that lapsed is refused as lapsed, and over HTTP the same.
    const lapsed = await refusal(ackTask(env, t.human.humanId, tasks[1].task_id, null, Date.parse(tasks[1].lease_expires_at) + 1));
    expect(lapsed).toEqual({ code: "task_not_leased", details: { task_id: tasks[1].task_id, status: "lease_lapsed" } });
    await expectError(await ack(stranger.key, tasks[1].task_id), 404, "task_not_found");
  });

  it("a claim listing 100 apps binds at most D1's 100 parameters to each statement and still finds its tasks", async () => {
    const t = await taskApp();
    await write(t, "issues", { title: "listed" }, "l1");
    await tasksIn(t, "queued", 1);
    const appIds = [...Array.from({ length: 99 }, (_, i) => `app_not_mine_${i}`), t.appId];
    const claiming = counted();
    const tasks = await claimTasks(claiming.env, { ownerHumanId: t.human.humanId, appIds, leasedBy: "agt_many_apps" }, 100);
    expect(tasks.map((task) => [task.app_id, task.row_key])).toEqual([[t.appId, "l1"]]);
    expect(claiming.d1.mostBound()).toBeLessThanOrEqual(100);
  });
});
