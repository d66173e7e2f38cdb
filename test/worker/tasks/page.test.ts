// The page's view of a row's agent tasks (WIRE §4.3 `GET /_svc/tasks`): the latest task
// of each rule for a row the caller can read, as queued → working → done (or failed),
// never prompt, credential or report; a row the caller cannot read is 404 like a get;
// bad queries are catalogue errors.
import { describe, expect, it } from "vitest";
import { expectError, json } from "../helpers";
import { appCall, ownerToken } from "../serve/helpers";
import { ack, claim, nack, summariseRule, taskApp, taskManifest, tasksIn, write } from "./helpers";

type Item = { task_type: string; status: string; created_at: string; updated_at: string };

async function rowTasks(slug: string, token: string, collection: string, row: string): Promise<Item[]> {
  return (await json<{ tasks: Item[] }>(await appCall(slug, `/_svc/tasks?collection=${collection}&row=${row}`, { token }), 200)).tasks;
}

describe("/_svc/tasks", { timeout: 60_000 }, () => {
  it("shows each rule's latest task for a readable row, as the page may see it", async () => {
    const triage = { on: "create", collection: "issues", taskType: "triage", prompt: "Label it." };
    const t = await taskApp(taskManifest([summariseRule(), triage]));
    const token = await ownerToken(t.human, t.slug);
    await write(t, "notes", { text: "no rule fires here" }, "n1");
    expect(await rowTasks(t.slug, token, "notes", "n1")).toEqual([]);
    await write(t, "issues", { title: "crash" }, "r1");
    await tasksIn(t, "queued", 2);
    const queued = await rowTasks(t.slug, token, "issues", "r1");
    expect(queued.map((item) => [item.task_type, item.status]).sort()).toEqual([["summarise", "queued"], ["triage", "queued"]]);
    for (const item of queued) expect(Object.keys(item).sort()).toEqual(["created_at", "status", "task_type", "updated_at"]);

    const [first, second] = await claim(t.key, { max: 2 });
    expect((await rowTasks(t.slug, token, "issues", "r1")).map((item) => item.status)).toEqual(["working", "working"]);
    await json(await ack(t.key, first.task_id, { report: "secret report" }), 200);
    await json(await nack(t.key, second.task_id, { report: "x" }, { AGENT_TASKS_MAX_ATTEMPTS: "1" }), 200);
    const finished = await rowTasks(t.slug, token, "issues", "r1");
    expect(Object.fromEntries(finished.map((item) => [item.task_type, item.status]))).toEqual({
      [first.task_type]: "done", [second.task_type]: "failed",
    });
    expect(JSON.stringify(finished)).not.toContain("secret report");
    expect(JSON.stringify(finished)).not.toContain("Label it");
  });

  it("a row the caller cannot read is 404; bad queries are refused", async () => {
    const t = await taskApp();
    await write(t, "issues", { title: "private" }, "p1");
    await tasksIn(t, "queued");
    // The app is private: an anonymous caller gets no row.
    const anonymous = await appCall(t.slug, "/_svc/tasks?collection=issues&row=p1");
    expect([401, 404]).toContain(anonymous.status);
    expect(await anonymous.text()).not.toContain("summarise");
    const token = await ownerToken(t.human, t.slug);
    await expectError(await appCall(t.slug, "/_svc/tasks?collection=issues&row=missing", { token }), 404, "row_not_found");
    await expectError(await appCall(t.slug, "/_svc/tasks?collection=nope&row=p1", { token }), 404, "collection_not_found");
    await expectError(await appCall(t.slug, "/_svc/tasks?collection=issues", { token }), 400, "invalid_request");
    await expectError(await appCall(t.slug, `/_svc/tasks?collection=issues&row=${"k".repeat(600)}`, { token }), 400, "invalid_request");
  });
});
