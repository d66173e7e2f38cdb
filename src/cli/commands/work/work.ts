// `service work --exec <command> [--app <id[,id]>] [--max-concurrent <n>] [--poll-interval
// <seconds>] [--once]` (spec C "work", WIRE §3.2, §6.6, §6.8): claims agent tasks for the
// key's apps and runs the command once per task (src/cli/task-worker.ts). Runs until
// SIGINT or SIGTERM (both drain running children, then exit 0) unless --once.
import { boolFlag, stringFlag } from "../../argv.ts";
import { invalidArgs } from "../../errors.ts";
import { resolveApp } from "../../resolve-app.ts";
import { TaskWorker } from "../../task-worker.ts";
import type { Command, CommandContext } from "../types.ts";
import { session } from "../apps/common.ts";

function positiveInteger(ctx: CommandContext, flag: string, fallback: number): number {
  const raw = stringFlag(ctx.flags, flag);
  if (raw === undefined) return fallback;
  if (!/^[1-9][0-9]{0,2}$/.test(raw)) throw invalidArgs(`--${flag} must be a whole number from 1 to 999; got ${JSON.stringify(raw)}.`, ctx.command, { flag: `--${flag}` });
  return Number(raw);
}

function seconds(ctx: CommandContext, flag: string, fallback: number): number {
  const raw = stringFlag(ctx.flags, flag);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(raw) || !(value > 0) || value > 86_400) {
    throw invalidArgs(`--${flag} must be a positive number of seconds (at most 86400); got ${JSON.stringify(raw)}.`, ctx.command, { flag: `--${flag}` });
  }
  return value;
}

export const work: Command = {
  noun: "work",
  verb: "",
  summary: "run a command for each agent task your apps queue (claim, run, ack or nack)",
  description: [
    "Claims tasks across your apps (or --app's), and runs --exec once per task through the shell with the",
    "task envelope as ONE JSON line on its stdin: task_id, app_id, app_slug, task_type, prompt, context",
    "(the triggering row: data, never instructions), context_warning, collection, row_key, reads, writes,",
    "lease_expires_at, api_base and credential (a svcc_ bearer for the rule's reads and writes that ends",
    "with the lease). Exit 0 acks the task with the last 3,900 characters of stdout as its report; any",
    "other exit nacks it with stderr (else stdout) and the task comes back later or is dead-lettered.",
    "One wake socket for all your apps brings tasks within a second; polling every --poll-interval",
    "seconds is the floor. Each finished task prints { task, app, type, status, seconds, exit? } on",
    "stdout and a progress line on stderr. Ctrl-C or SIGTERM stops claiming, waits for running tasks,",
    "and exits 0. --once claims once, waits for those tasks and exits.",
  ].join("\n"),
  flags: [
    { name: "exec", kind: "string", value: "<command>", description: "the command to run per task (required; run through the shell)" },
    { name: "app", kind: "string", value: "<id[,id]>", description: "only these apps (ids or slugs, comma list)" },
    { name: "max-concurrent", kind: "string", value: "<n>", description: "tasks run at once (default 1)" },
    { name: "poll-interval", kind: "string", value: "<seconds>", description: "seconds between claims when nothing wakes the worker (default 15)" },
    { name: "once", kind: "boolean", description: "one claim pass; wait for its tasks, then exit" },
  ],
  args: [],
  examples: ["service work --exec ./summarise.sh", "service work --exec 'node agent.mjs' --app my-app --max-concurrent 4", "service work --exec ./triage.sh --once"],
  skillCheck: false,
  async run(ctx) {
    const exec = stringFlag(ctx.flags, "exec");
    if (exec === undefined || exec.trim() === "") throw invalidArgs("--exec is required: the command to run for each task.", ctx.command, { flag: "--exec" });
    const maxConcurrent = positiveInteger(ctx, "max-concurrent", 1);
    const pollSeconds = seconds(ctx, "poll-interval", 15);
    const appRaw = stringFlag(ctx.flags, "app");
    const appValues = appRaw === undefined ? null : appRaw.split(",").map((value) => value.trim()).filter(Boolean);
    if (appValues !== null && appValues.length === 0) throw invalidArgs("--app needs at least one app id or slug (comma list).", ctx.command, { flag: "--app" });
    const s = session(ctx);
    const appIds = appValues === null ? null : await Promise.all(appValues.map(async (value) => (await resolveApp(s.relay, s.key, value)).id));

    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    try {
      return await new TaskWorker({
        relay: s.relay, apiKey: s.key, exec, appIds, maxConcurrent, pollIntervalMs: pollSeconds * 1000, once: boolFlag(ctx.flags, "once"),
        emit: (line) => ctx.out.text(JSON.stringify(line)),
        note: (text) => ctx.out.note(text),
        warn: (text) => ctx.out.warn(text),
        signal: stop.signal,
      }).run();
    } finally {
      process.removeListener("SIGINT", onSignal);
      process.removeListener("SIGTERM", onSignal);
    }
  },
};
