/**
 * Advisories: collections whose permissions expose more than their owner may expect,
 * worst first. Pure: judged from the compiled manifest and the app's visibility. The
 * same findings back `GET /v1/apps/advisories` and the CLI's `apps audit`.
 */
import type { CompiledManifest, Subject } from "../manifest";
import type { Visibility } from "../db/apps";

export type Severity = "high" | "medium" | "low";

export interface Advisory {
  code: string;
  collection: string;
  severity: Severity;
  message: string;
}

const rank: Record<Severity, number> = { high: 0, medium: 1, low: 2 };

function everyone(list: Subject[] | null): boolean {
  return (list ?? []).some((s) => s.who === "anyone" && s.scope === "all");
}

export function advisoriesFor(manifest: CompiledManifest, visibility: Visibility): Advisory[] {
  const open = visibility !== "private";
  const found: Advisory[] = [];
  for (const [name, col] of Object.entries(manifest.collections)) {
    const p = col.permissions;
    if (open && everyone(p.read)) {
      found.push({ code: "world_readable", collection: name, severity: visibility === "public" ? "high" : "medium",
        message: `Anyone who can open this ${visibility} app can read every row of "${name}".` });
    }
    if (open && p.write.some((s) => s.who === "anyone") && !col.anonWriteBudget) {
      found.push({ code: "anonymous_writes_unbudgeted", collection: name, severity: "high",
        message: `Anonymous visitors can create rows in "${name}" with no anonWriteBudget to cap them.` });
    }
    if (everyone(p.update) && !col.appendOnly) {
      found.push({ code: "anyone_updates_every_row", collection: name, severity: "medium",
        message: `Anyone with access can change every row of "${name}", including rows others wrote.` });
    }
    if (everyone(p.delete) && !col.appendOnly) {
      found.push({ code: "anyone_deletes_every_row", collection: name, severity: "medium",
        message: `Anyone with access can delete every row of "${name}", including rows others wrote.` });
    }
    if (everyone(p.countRead) && !everyone(p.read)) {
      found.push({ code: "count_wider_than_read", collection: name, severity: "low",
        message: `Anyone can count "${name}" although they cannot read all of it; the count reveals activity.` });
    }
  }
  return found.sort((a, b) => rank[a.severity] - rank[b.severity] || a.collection.localeCompare(b.collection));
}

export function highestSeverity(list: Advisory[]): Severity | null {
  return list.length ? list[0].severity : null;
}
