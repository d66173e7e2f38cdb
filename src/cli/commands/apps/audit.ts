// `service apps audit [--severity] [--json]`: review the collection permissions of every
// app I own (GET /v1/apps/advisories). By default a table for a person; with --json the
// relay's report as is (WIRE §6.6: the one verb where --json changes the output). Exits 1
// when the audit has any high finding (counts cover the whole audit, whatever --severity
// shows), after printing the report.
import { boolFlag } from "../../argv.ts";
import type { Command } from "../types.ts";
import { oneOf, query, session } from "./common.ts";

const SEVERITIES = ["high", "medium", "low"];

interface Advisory {
  code: string;
  collection: string;
  severity: string;
  message: string;
}

interface AuditItem {
  app_id: string;
  slug: string;
  visibility: string;
  status: string;
  advisories: Advisory[];
}

interface AuditReport {
  apps_scanned?: number;
  apps_affected?: number;
  counts?: { high?: number; medium?: number; low?: number };
  truncated?: boolean;
  items?: AuditItem[];
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** The human form of the report: a summary line, then one row per finding. */
export function auditTable(report: AuditReport): string {
  const counts = { high: report.counts?.high ?? 0, medium: report.counts?.medium ?? 0, low: report.counts?.low ?? 0 };
  const lines = [
    `Audited ${plural(report.apps_scanned ?? 0, "app")}: ${counts.high} high, ${counts.medium} medium, ${counts.low} low ` +
      `(${plural(report.apps_affected ?? 0, "app")} listed).`,
  ];
  if (report.truncated) lines.push("Only the first apps were scanned; the relay truncated the audit.");
  const rows: string[][] = [];
  for (const item of report.items ?? []) {
    for (const a of item.advisories ?? []) rows.push([a.severity, `${item.slug} (${item.visibility})`, a.collection, a.code, a.message]);
  }
  if (rows.length === 0) {
    lines.push("", "No findings.");
    return lines.join("\n");
  }
  const header = ["SEVERITY", "APP", "COLLECTION", "FINDING", "WHAT IT MEANS"];
  const widths = header.slice(0, -1).map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const format = (r: string[]) => r.map((cell, i) => (i < widths.length ? cell.padEnd(widths[i]) : cell)).join("  ").trimEnd();
  lines.push("", format(header), ...rows.map(format));
  return lines.join("\n");
}

export const appsAudit: Command = {
  noun: "apps",
  verb: "audit",
  summary: "review your apps' collection permissions; exit 1 on any high finding",
  description: [
    "Prints a table for a person by default and the relay's JSON report with --json.",
    "Exit status 1 when any app has a high-severity finding (the report is printed first).",
  ].join("\n"),
  flags: [{ name: "severity", kind: "string", value: "<high|medium|low>", description: "list only findings of this severity" }],
  args: [],
  examples: ["service apps audit", "service apps audit --json --severity high"],
  skillCheck: true,
  async run(ctx) {
    const severity = oneOf(ctx, "severity", SEVERITIES);
    const s = session(ctx);
    const report = (await s.relay.object("GET", `/v1/apps/advisories${query({ severity })}`, { auth: s.auth })) as AuditReport;
    if (boolFlag(ctx.flags, "json")) ctx.out.json(report);
    else ctx.out.text(auditTable(report));
    const high = report.counts?.high ?? 0;
    if (high > 0) {
      ctx.out.warn(`${plural(high, "high-severity finding")}; exiting with status 1.`);
      return 1;
    }
  },
};
