// Server CPU per request, for `npm run bench`: the CPU time (user + system) the runtime
// processes under one `wrangler dev` spent, read from /proc before and after a run. On a
// shared machine requests per second move with everyone else's load; the CPU a request
// costs the server moves much less, so it is the steadier figure to set beside the bare
// baseline (issue 16 asks for both). Linux only: elsewhere the figure is left out.
import { readFileSync, readdirSync } from "node:fs";
import { spawnSync } from "node:child_process";

const TICKS_PER_SECOND = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

/** pid → { ppid, name, ticks } for every process this user can read. */
function processes() {
  const found = new Map();
  let entries;
  try {
    entries = readdirSync("/proc");
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The name sits in parentheses and may hold spaces; the fields after it are plain.
      const close = stat.lastIndexOf(")");
      const name = stat.slice(stat.indexOf("(") + 1, close);
      const fields = stat.slice(close + 2).split(" ");
      found.set(Number(entry), { ppid: Number(fields[1]), name, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch { /* gone meanwhile */ }
  }
  return found;
}

/**
 * A reader of the CPU milliseconds spent so far by the workerd processes started under
 * `rootPid` (a `wrangler dev`), or null when none can be found (not Linux, or not started).
 */
export function serverCpu(rootPid) {
  const pids = () => {
    const all = processes();
    const below = new Set([rootPid]);
    let grew = true;
    while (grew) {
      grew = false;
      for (const [pid, proc] of all) {
        if (!below.has(pid) && below.has(proc.ppid)) { below.add(pid); grew = true; }
      }
    }
    return [...below].filter((pid) => all.get(pid)?.name.startsWith("workerd"));
  };
  const servers = pids();
  if (servers.length === 0) return null;
  return () => {
    const all = processes();
    return servers.reduce((sum, pid) => sum + (all.get(pid)?.ticks ?? 0), 0) * (1000 / TICKS_PER_SECOND);
  };
}
