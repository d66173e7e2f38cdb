// The owner console's view of an app's agent tasks (`/console/apps/:id/tasks`): every
// state newest first with attempts and the worker's report, a status filter, the link from
// the app's page, and another owner's app being no app at all.
import { describe, expect, it } from "vitest";
import { call, json, signIn } from "../helpers";
import { ack, claim, nack, taskApp, tasksIn, write } from "./helpers";

async function page(path: string, session: string, status = 200): Promise<string> {
  const res = await call(path, { session });
  const html = await res.text();
  expect(res.status, html.slice(0, 500)).toBe(status);
  return html;
}

describe("console: agent tasks", { timeout: 60_000 }, () => {
  it("lists the app's tasks in every state with attempts and reports, filtered by status", async () => {
    const t = await taskApp();
    expect(await page(`/console/apps/${t.appId}`, t.human.session)).toContain(`href="/console/apps/${t.appId}/tasks"`);
    expect(await page(`/console/apps/${t.appId}/tasks`, t.human.session)).toContain('id="no-tasks"');
    for (const key of ["one", "two", "three"]) await write(t, "issues", { title: key }, key);
    await tasksIn(t, "queued", 3);
    const [first, second] = await claim(t.key, { max: 2 });
    await json(await ack(t.key, first.task_id, { report: "summary <written>" }), 200);
    await json(await nack(t.key, second.task_id, { report: "tool failed" }, { AGENT_TASKS_MAX_ATTEMPTS: "1" }), 200);
    const html = await page(`/console/apps/${t.appId}/tasks`, t.human.session);
    const states = Object.fromEntries([...html.matchAll(/<tr data-task="([^"]+)" data-status="(\w+)">/g)].map((m) => [m[1], m[2]]));
    expect(Object.values(states).sort()).toEqual(["dead", "done", "queued"]);
    expect(states[first.task_id]).toBe("done");
    expect(html).toContain("summary &lt;written&gt;");
    expect(html).toContain("tool failed");
    const dead = await page(`/console/apps/${t.appId}/tasks?status=dead`, t.human.session);
    expect([...dead.matchAll(/<tr data-task="([^"]+)"/g)].map((m) => m[1])).toEqual([second.task_id]);
    expect((await call(`/console/apps/${t.appId}/tasks?status=bogus`, { session: t.human.session })).status).toBe(400);
    const stranger = await signIn();
    expect((await call(`/console/apps/${t.appId}/tasks`, { session: stranger.session })).status).toBe(404);
  });
});
