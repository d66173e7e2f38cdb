// Issue 12's "done when", as a person and an agent would do it: an agent deploys an app
// with an inbound hook that checks GitHub-style signatures and an agent-task rule
// "summarise each new issue"; `service work --exec ./summarise.sh` runs as a real
// process; `curl` posts a signed issue to the hook's secret URL; the owner's browser shows
// the issue live, the worker gets the task through the wake socket (its polling is set an
// hour apart, so nothing else could have brought it), writes the summary back with the
// task's lease credential and acks, and the page shows the summary. Then a worker killed
// in the middle of a task and started again finishes that task exactly once, and a
// forged signature writes nothing.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { chmodSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { api, ownerWithAgent, relayUrl, signInHere, useBrowser } from "./support";
import { cleanupTempHomes, cliPath, tempDir } from "../cli/helpers";
import { waitFor } from "../support/wait";

const { newPage } = useBrowser();
const run = promisify(execFile);
afterAll(() => cleanupTempHomes());

const MANIFEST = {
  "x-service-manifest": {
    app: { name: "Issue desk" },
    collections: {
      issues: { read: ["owner"], write: ["owner"], delete: ["owner"] },
      summaries: { read: ["owner"], write: ["owner"], delete: ["owner"] },
    },
    ingest: [{
      name: "github", collection: "issues",
      map: { number: "issue.number", title: "issue.title", body: "issue.body" },
      dedupeKey: "header:x-github-delivery", verify: { scheme: "github" }, wake: true,
    }],
    agentTasks: [{
      on: "create", collection: "issues", machineAuthorKinds: ["hook"], taskType: "summarise",
      prompt: "Summarise each new issue in one line.", reads: ["issues"], writes: ["summaries"], leaseSeconds: 5,
    }],
  },
};

/** The page: every issue, and its summary once there is one, live. */
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Issue desk</title></head>
<body><ul id="issues"></ul>
<script>
  const svc = window.service;
  const render = () => {
    const summaries = new Map(svc.collections.snapshot("summaries").map((row) => [row.key, row.data.text]));
    document.getElementById("issues").replaceChildren(...svc.collections.snapshot("issues").map((row) => {
      const li = document.createElement("li");
      li.dataset.key = row.key;
      li.textContent = "#" + row.data.number + " " + row.data.title + " | " + (summaries.get(row.key) ?? "waiting for a summary");
      return li;
    }));
  };
  svc.collections.on("issues", render);
  svc.collections.on("summaries", render);
  svc.ready.then(() => { render(); document.body.dataset.ready = svc.session.kind; });
</script></body></html>`;

/**
 * What the person's agent would write: read the task from stdin, write a one-line summary
 * with the task's own credential, print a report. An issue whose title says "slow" hangs
 * on its first run (a marker file remembers the run), so the test can kill the worker then.
 */
const SUMMARISE_SH = `#!/bin/sh
exec node --input-type=module -e '
let input = "";
for await (const chunk of process.stdin) input += chunk;
const task = JSON.parse(input.split("\\n")[0]);
const { appendFileSync, existsSync, writeFileSync } = await import("node:fs");
const marks = process.env.RUNS_DIR + "/" + task.task_id;
const firstRun = !existsSync(marks);
appendFileSync(marks, "run\\n");
const issue = task.context.row.data;
if (firstRun && issue.title.includes("slow")) await new Promise((resolve) => setTimeout(resolve, 120000));
const res = await fetch(task.api_base + "/v1/apps/" + task.app_id + "/collections/summaries", {
  method: "POST",
  headers: { authorization: "Bearer " + task.credential, "content-type": "application/json" },
  body: JSON.stringify({ key: task.row_key, data: { text: "Summary: " + issue.title.toLowerCase() } }),
});
if (res.status >= 300) { process.stderr.write("write-back answered " + res.status); process.exit(1); }
console.log("summarised issue " + issue.number);
'
`;

/** Posts an issue the way GitHub would, with curl: raw JSON body, delivery id, signature. */
async function postIssue(hookUrl: string, secret: string, issue: { number: number; title: string; body: string }, signWith = secret): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ action: "opened", issue });
  const signature = `sha256=${createHmac("sha256", signWith).update(body).digest("hex")}`;
  const { stdout } = await run("curl", [
    "-sS", "-X", "POST", hookUrl, "-H", "Content-Type: application/json", "-H", "X-GitHub-Event: issues",
    "-H", `X-GitHub-Delivery: ${randomUUID()}`, "-H", `X-Hub-Signature-256: ${signature}`,
    "--data-binary", body, "-w", "\n%{http_code}",
  ]);
  const lines = stdout.split("\n");
  return { status: Number(lines.pop()), body: lines.join("\n") };
}

interface Worker { child: ChildProcess; out: { stdout: string; stderr: string } }

/**
 * `service work --exec ./summarise.sh`, in its own process group so a kill takes its child
 * too, polling every `pollSeconds` besides listening on the wake socket.
 */
function startWorker(dir: string, key: string, runsDir: string, pollSeconds: number): Worker {
  const child = spawn(cliPath, ["work", "--exec", "./summarise.sh", "--poll-interval", String(pollSeconds)], {
    cwd: dir, detached: true, stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "", HOME: dir, XDG_CONFIG_HOME: dir, SERVICE_URL: relayUrl, SERVICE_API_KEY: key, RUNS_DIR: runsDir },
  });
  const out = { stdout: "", stderr: "" };
  child.stdout!.on("data", (chunk) => { out.stdout += chunk; });
  child.stderr!.on("data", (chunk) => { out.stderr += chunk; });
  return { child, out };
}

function stopGroup(worker: Worker, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (worker.child.exitCode !== null || worker.child.signalCode !== null) return resolve();
    worker.child.once("close", () => resolve());
    process.kill(-worker.child.pid!, signal);
  });
}

interface Task { task_id: string; status: string; attempts: number; row_key: string; report: string | null }

describe("the issue desk of issue 12, end to end", () => {
  it("a signed POST becomes a live row, the worker gets the task through the wake socket, the summary shows; a killed worker's task finishes once", async () => {
    const { email, key } = await ownerWithAgent("desk");
    const deployed = await api<{ app_id: string; url: string }>("/v1/apps", { key, body: { html: PAGE, manifest: MANIFEST, visibility: "private" } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
    const app = deployed.body;
    const hooks = await api<{ hooks: Array<{ name: string; url: string }> }>(`/v1/apps/${app.app_id}/ingest-hooks`, { key });
    const hookUrl = hooks.body.hooks.find((hook) => hook.name === "github")!.url;
    expect(new URL(hookUrl).origin).toBe(relayUrl);
    const minted = await api<{ secret: string }>(`/v1/apps/${app.app_id}/ingest-hooks/github/signing-secret`, { key, method: "PUT", body: {} });
    expect(minted.status, JSON.stringify(minted.body)).toBe(200);
    const secret = minted.body.secret;
    const tasks = async () => (await api<{ tasks: Task[] }>(`/v1/apps/${app.app_id}/agent-tasks`, { key })).body.tasks;

    // The worker, in its own directory with its script.
    const dir = tempDir();
    const runsDir = tempDir();
    writeFileSync(path.join(dir, "summarise.sh"), SUMMARISE_SH);
    chmodSync(path.join(dir, "summarise.sh"), 0o755);
    let worker = startWorker(dir, key, runsDir, 3600);

    // The owner opens the app in Chromium and signs in.
    const p = await newPage();
    await p.goto(app.url);
    await p.locator("#svc-sign-in").click();
    await signInHere(p, email);
    await p.locator('body[data-ready="owner"]').waitFor({ state: "attached", timeout: 15_000 });

    try {
      // A forged signature is refused and writes nothing.
      const forged = await postIssue(hookUrl, secret, { number: 1, title: "Forged", body: "x" }, "ihk_not-the-secret");
      expect(forged.status).toBe(401);

      // GitHub posts an issue: it shows live, the worker summarises it, the summary shows.
      const posted = await postIssue(hookUrl, secret, { number: 7, title: "Crash on start", body: "The app crashes when opened offline." });
      expect(posted).toEqual({ status: 200, body: JSON.stringify({ ok: true }) });
      await p.locator("#issues li", { hasText: "#7 Crash on start" }).waitFor({ timeout: 15_000 });
      await p.locator("#issues li", { hasText: "#7 Crash on start | Summary: crash on start" }).waitFor({ timeout: 30_000 });
      const [first] = await waitFor(async () => {
        const done = (await tasks()).filter((task) => task.status === "done");
        return done.length === 1 ? done : null;
      }, { timeout: 15_000, message: "the first task acked" });
      expect(first.attempts).toBe(1);
      expect(first.report).toBe("summarised issue 7");
      expect(worker.out.stderr).toContain("wake socket connected");
      expect(await p.locator("#issues li", { hasText: "Forged" }).count()).toBe(0);

      // A second issue whose first run hangs: the worker is killed with its child mid-task.
      expect((await postIssue(hookUrl, secret, { number: 8, title: "Slow sync", body: "Sync takes minutes." })).status).toBe(200);
      await p.locator("#issues li", { hasText: "#8 Slow sync | waiting for a summary" }).waitFor({ timeout: 15_000 });
      const hung = await waitFor(async () => {
        const running = readdirSync(runsDir).filter((file) => file !== first.task_id);
        return running.length === 1 ? running[0] : null;
      }, { timeout: 30_000, message: "the second task's first run" });
      await stopGroup(worker, "SIGKILL");

      // Started again (polling as its floor: a lapsed lease wakes nobody), the worker gets
      // the task back once its lease lapses, and finishes it once.
      worker = startWorker(dir, key, runsDir, 2);
      await p.locator("#issues li", { hasText: "#8 Slow sync | Summary: slow sync" }).waitFor({ timeout: 45_000 });
      const second = await waitFor(async () => (await tasks()).find((task) => task.task_id === hung && task.status === "done") ?? null,
        { timeout: 15_000, message: "the second task acked" });
      expect(second.attempts).toBe(2);
      const summaries = await api<{ rows: Array<{ key: string; data: { text: string } }> }>(`/v1/apps/${app.app_id}/collections/summaries`, { key });
      expect(summaries.body.rows.map((row) => row.data.text).sort()).toEqual(["Summary: crash on start", "Summary: slow sync"]);
      expect((await tasks()).map((task) => task.status)).toEqual(["done", "done"]);
    } catch (err) {
      throw new Error(`${(err as Error).message}\nworker stderr:\n${worker.out.stderr}\nworker stdout:\n${worker.out.stdout}`);
    } finally {
      await stopGroup(worker, "SIGKILL");
    }
  }, 180_000);
});
