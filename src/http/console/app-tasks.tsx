/**
 * An app's agent tasks for its owner (`/console/apps/:id/tasks`): every task its
 * agentTasks rules queued, newest first, a page at a time, with its type, row, state
 * (queued, leased, done, dead-lettered, expired, discarded, capped), attempts and the
 * worker's last report. Read through the same list as `GET /v1/apps/:id/agent-tasks`
 * (src/effects/tasks/views.ts); `?status=` narrows it. Plain HTML: reload to see changes.
 */
import * as z from "zod";
import type { AppRow } from "../../db/apps";
import { TASK_STATUSES } from "../../db/tasks-schema";
import { listTasks } from "../../effects/tasks/views";
import { parseWith } from "../routes";
import { requireLive } from "../v1/app-access";
import type { AppContext } from "../types";
import { When } from "./layout";
import { NextPage } from "./data-view";
import { appPath, ownerAppRoute } from "./owner-app";
import { renderPage } from "./page";
import type { PageRoute } from "./routes";

const PAGE_TASKS = 25;

const tasksQuery = z.object({ status: z.enum(TASK_STATUSES).optional(), before: z.string().min(1).max(100).optional() });

const STATUS_WORDS: Record<(typeof TASK_STATUSES)[number], string> = {
  queued: "queued", leased: "being worked on", done: "done", dead: "dead-lettered", expired: "expired unclaimed",
  discarded: "discarded (rule changed)", capped: "held back (hourly cap)",
};

function tasksPath(app: AppRow, query: { status?: string; before?: string } = {}): string {
  const search = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined)).toString();
  return appPath(app, search ? `/tasks?${search}` : "/tasks");
}

async function showTasks(c: AppContext, target: AppRow): Promise<Response> {
  const app = requireLive(target);
  const query = parseWith(tasksQuery, Object.fromEntries(new URL(c.req.url).searchParams), "query");
  const page = await listTasks(c.env, app.id, { status: query.status, limit: PAGE_TASKS, before: query.before });
  return renderPage(c, 200, `Agent tasks of ${app.slug}`, (
    <>
      <p><a href={appPath(app)} id="back-to-app">Back to {app.slug}</a> · <a href={tasksPath(app)} id="all-tasks">All tasks</a>
        {TASK_STATUSES.map((status) => <> · <a href={tasksPath(app, { status })} data-filter={status}>{STATUS_WORDS[status]}</a></>)}</p>
      <p class="muted">Work the app's agentTasks rules queued for your agent (run <code>service work</code> to do it), newest first. Reload the page to see changes.</p>
      {page.tasks.length ? (
        <table id="tasks" class="records">
          <thead><tr><th scope="col">Queued</th><th scope="col">Type</th><th scope="col">Row</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Report</th></tr></thead>
          <tbody>{page.tasks.map((task) => (
            <tr data-task={task.task_id} data-status={task.status}>
              <td data-label="Queued"><When iso={task.created_at} /></td>
              <td data-label="Type"><code>{task.task_type}</code></td>
              <td data-label="Row"><a href={appPath(app, `/collections/${encodeURIComponent(task.collection)}`)}>{task.collection}</a> <code>{task.row_key}</code></td>
              <td data-label="State">{STATUS_WORDS[task.status]}{task.lease_expires_at ? <> until <When iso={task.lease_expires_at} /></> : null}</td>
              <td data-label="Attempts">{task.attempts}</td>
              <td data-label="Report">{task.report ? <code class="data">{task.report.length > 300 ? `${task.report.slice(0, 300)}…` : task.report}</code> : <span class="muted">none</span>}</td>
            </tr>
          ))}</tbody>
        </table>
      ) : <p id="no-tasks">{query.status ? "No tasks in this state." : "No agent tasks yet."}</p>}
      <NextPage href={page.next_before === null ? null : tasksPath(app, { status: query.status, before: page.next_before })}
        first={query.before === undefined ? null : tasksPath(app, { status: query.status })} what="the tasks" />
    </>
  ));
}

export function appTasksPages(route: PageRoute): void {
  route("get", "/console/apps/:id/tasks", ownerAppRoute(showTasks));
}
