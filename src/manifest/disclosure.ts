/**
 * What a manifest lets the app do, said plainly for the human who owns it (served later
 * by GET /v1/apps/:id/disclosure and shown before a template upgrade). Built only from
 * the compiled manifest, so it can never disagree with what the relay enforces.
 */
import { ruleTarget } from "./origins";
import type { CompiledManifest, Condition, Subject } from "./types";

export interface Disclosure {
  lines: string[];
  app: { name: string; description: string | null; icon: string | null };
  collections: {
    name: string;
    read: string[];
    write: string[];
    update: string[];
    delete: string[];
    count_read: string[] | null;
    append_only: boolean;
  }[];
  external_hosts: string[];
  embeds: string[];
  embed_ancestors: string[];
  capabilities: string[];
  cdn: boolean;
  offline: boolean;
  /** Distinct origins rows may be sent to; `setting:<field>` when read from settings at fire time. */
  webhook_targets: string[];
  webhook_rules: { collection: string; on: "create" | "update" | "schedule"; target: string }[];
  notify: { collection: string; on: "create" | "update"; to: string[]; channels: string[] }[];
  agent_tasks: { collection: string; on: "create" | "update"; task_type: string; reads: string[]; writes: string[] }[];
  ingest_hooks: { name: string; collection: string; mode: "append" | "upsert"; verified: boolean }[];
  routes: { path: string; collection: string; indexable: boolean }[];
  /** True when nothing beyond the app's own origin is reached: no hosts, embeds,
   *  capabilities, cdn, offline or webhook rules (the template-upgrade permission set). */
  is_empty: boolean;
}

function names(list: Subject[]): string[] {
  return list.map((s) => s.subject);
}

function who(list: string[]): string {
  return list.length === 0 ? "nobody" : list.join(", ");
}

const OP_WORDS: Record<string, string> = {
  equals: "is", notEquals: "is not", in: "is one of", notIn: "is not one of", gt: "is above", lt: "is below",
  gte: "is at least", lte: "is at most", changedTo: "changes to",
};

function describeWhen(when: Condition | null): string {
  if (!when) return "";
  if (when.kind === "authorKind") return ` (only when the writer ${when.op === "in" ? "is" : "is not"} ${when.kinds.join("/")})`;
  return ` (only when ${when.field} ${OP_WORDS[when.op]} ${JSON.stringify(when.value)})`;
}

function describeTarget(target: string): string {
  if (target === "owner") return "the owner";
  if (target === "author") return "the row's last writer";
  if (target === "creator") return "the row's creator";
  if (target === "submitter") return "the submitter";
  if (target.startsWith("role:")) return `role "${target.slice(5)}"`;
  if (target.startsWith("field:")) return `whoever "${target.slice(6)}" names`;
  return target;
}

export function disclosure(compiled: CompiledManifest): Disclosure {
  const lines: string[] = [];

  const collections = Object.values(compiled.collections).map((c) => {
    const p = c.permissions;
    const entry = {
      name: c.name,
      read: names(p.read),
      write: names(p.write),
      update: c.appendOnly ? [...c.appendOnlyExcept] : names(p.update),
      delete: c.appendOnly ? [...c.appendOnlyExcept] : names(p.delete),
      count_read: p.countRead ? names(p.countRead) : null,
      append_only: c.appendOnly,
    };
    let line = `Collection "${c.name}": read by ${who(entry.read)}; created by ${who(entry.write)}; updated by ${who(entry.update)}; deleted by ${who(entry.delete)}`;
    if (entry.count_read) line += `; counted by ${who(entry.count_read)}`;
    if (c.appendOnly) line += "; append-only";
    if (c.anonWriteBudget) line += `; anonymous writes capped at ${c.anonWriteBudget.perIpPerDay || "unlimited"} per visitor and ${c.anonWriteBudget.perAppPerDay || "unlimited"} per day`;
    if (c.antiAbuse) line += "; anonymous writes need a bot challenge";
    lines.push(`${line}.`);
    return entry;
  });

  for (const host of compiled.externalHosts) lines.push(`The page may connect to ${host}.`);
  for (const host of compiled.embeds) lines.push(`The page may embed content from ${host}.`);
  for (const origin of compiled.embedAncestors) lines.push(`${origin} may show this app inside its own pages.`);
  if (compiled.capabilities.length > 0) lines.push(`The page may ask the browser for: ${compiled.capabilities.join(", ")}.`);
  if (compiled.cdn) lines.push("The page may load scripts and styles from any https website.");
  if (compiled.offline) lines.push("The app installs a service worker so it works offline.");
  if (compiled.app.indexable) lines.push("Search engines may index the app when it is public.");

  const webhookRules: Disclosure["webhook_rules"] = [];
  for (const w of compiled.webhooks) {
    const target = w.url ? ruleTarget(w.url, w.connection) : `setting:${w.urlFromSetting}`;
    webhookRules.push({ collection: w.collection, on: w.on, target });
    const where = w.url ? target : `the address stored in setting "${w.urlFromSetting}"`;
    lines.push(`When a row of "${w.collection}" is ${w.on === "create" ? "created" : "updated"}, it is sent to ${where}${describeWhen(w.when)}.`);
  }
  for (const s of compiled.schedules) {
    const timing = s.offsetDays === 0 ? `on its ${s.dateField} date` : `${Math.abs(s.offsetDays)} day(s) ${s.offsetDays < 0 ? "before" : "after"} its ${s.dateField} date`;
    if (s.action.kind === "webhook") {
      const target = s.action.url ? ruleTarget(s.action.url, s.action.connection) : `setting:${s.action.urlFromSetting}`;
      webhookRules.push({ collection: s.collection, on: "schedule", target });
      const where = s.action.url ? target : `the address stored in setting "${s.action.urlFromSetting}"`;
      lines.push(`Each row of "${s.collection}" is sent to ${where} ${timing}${describeWhen(s.when)}.`);
    } else {
      lines.push(`Emails ${s.action.to.join(" and ")} about each row of "${s.collection}" ${timing}${describeWhen(s.when)}.`);
    }
  }
  for (const n of compiled.notify) {
    lines.push(`Notifies ${n.to.map(describeTarget).join(", ")} by ${n.channels.join("/")} when a row of "${n.collection}" is ${n.on === "create" ? "created" : "updated"}${describeWhen(n.when)}.`);
  }
  for (const t of compiled.agentTasks) {
    const access = [t.reads.length ? `read ${t.reads.join(", ")}` : "", t.writes.length ? `write ${t.writes.join(", ")}` : ""].filter(Boolean).join(" and ");
    lines.push(`Queues agent task "${t.taskType}" when a row of "${t.collection}" is ${t.on === "create" ? "created" : "updated"}${describeWhen(t.when)}${access ? `; the task may ${access}` : ""}.`);
  }
  for (const h of compiled.ingest) {
    lines.push(`Accepts data from outside into "${h.collection}" through inbound hook "${h.name}"${h.verify ? " (signatures verified)" : ""}.`);
  }
  for (const r of compiled.routes) {
    lines.push(`Public page ${r.path} shows a row of "${r.collection}"${r.indexable ? " and is listed for search engines" : ""}.`);
  }

  const webhookTargets = [...new Set(webhookRules.map((w) => w.target))].sort();
  return {
    lines,
    app: { name: compiled.app.name, description: compiled.app.description, icon: compiled.app.icon },
    collections,
    external_hosts: [...compiled.externalHosts],
    embeds: [...compiled.embeds],
    embed_ancestors: [...compiled.embedAncestors],
    capabilities: [...compiled.capabilities],
    cdn: compiled.cdn,
    offline: compiled.offline,
    webhook_targets: webhookTargets,
    webhook_rules: webhookRules,
    notify: compiled.notify.map((n) => ({ collection: n.collection, on: n.on, to: [...n.to], channels: [...n.channels] })),
    agent_tasks: compiled.agentTasks.map((t) => ({ collection: t.collection, on: t.on, task_type: t.taskType, reads: [...t.reads], writes: [...t.writes] })),
    ingest_hooks: compiled.ingest.map((h) => ({ name: h.name, collection: h.collection, mode: h.mode, verified: h.verify !== null })),
    routes: compiled.routes.map((r) => ({ path: r.path, collection: r.collection, indexable: r.indexable })),
    is_empty: compiled.externalHosts.length === 0 && compiled.embeds.length === 0 && compiled.capabilities.length === 0 &&
      !compiled.cdn && !compiled.offline && webhookRules.length === 0,
  };
}
