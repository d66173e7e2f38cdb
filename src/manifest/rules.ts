/**
 * The rule arrays of a manifest (WIRE §5.5): notify, schedules, webhooks, agentTasks and
 * ingest. This file only validates and normalises them, each with its own error code;
 * firing them belongs to the rule engines, which read the normalised rules (defaults
 * filled in, conditions parsed, a stable `id` per rule) and never the raw manifest.
 */
import type { ErrorCode } from "../errors";
import { checkBodyTemplate, checkField, checkTemplate, compileCondition, MACHINE_AUTHOR_KINDS } from "./conditions";
import { checkRelativeTarget, checkTargetUrl, isRelativeTarget } from "./origins";
import {
  at, expectArray, expectBoolean, expectEnum, expectInteger, expectObject, expectString, expectStringList, fail, onlyKeys,
  own, stableHash,
} from "./read";
import type {
  AgentTaskRule, CompiledCollection, CompiledRole, IngestRule, JsonObject, JsonValue, ManifestContext, NotifyChannel,
  NotifyRule, ResolvedLimits, ScheduleAction, ScheduleRule, WebhookRule,
} from "./types";

export interface RuleContext {
  collections: Record<string, CompiledCollection>;
  roles: Record<string, CompiledRole>;
  settingsCollection: string | null;
  offline: boolean;
  limits: ResolvedLimits;
  context: ManifestContext;
}

const CONNECTION_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

function ruleList(value: unknown, path: string, code: ErrorCode, max?: number): JsonValue[] {
  if (value === undefined) return [];
  const list = expectArray(value, path, code);
  if (max !== undefined && list.length > max) fail(code, path, `has ${list.length} rules; at most ${max} are allowed`, { limit: max });
  return list;
}

function ruleCollection(value: unknown, ctx: RuleContext, path: string, code: ErrorCode): CompiledCollection {
  if (value === undefined) fail(code, path, "is required");
  const name = expectString(value, path, code);
  const collection = own(ctx.collections, name);
  if (!collection) fail(code, path, `names an undeclared collection "${name}"`);
  return collection;
}

function ruleOn(value: unknown, path: string, code: ErrorCode): "create" | "update" {
  if (value === undefined) fail(code, path, 'is required ("create" or "update")');
  return expectEnum(value, ["create", "update"], path, code);
}

function required(rule: JsonObject, key: string, path: string, code: ErrorCode): JsonValue {
  if (rule[key] === undefined) fail(code, at(path, key), "is required");
  return rule[key];
}

function machineKinds(value: unknown, path: string, code: ErrorCode): ("hook" | "service")[] {
  if (value === undefined) return [];
  return expectStringList(value, path, code, {}, (kind, kPath) => {
    if (kind !== "hook" && kind !== "service") fail(code, kPath, 'must be "hook" or "service" (human writes always fire)');
  }) as ("hook" | "service")[];
}

/** Identities are hashes; two rules that hash alike get `#2`, `#3`… so ids stay unique. */
function uniqueIds<T extends { id: string }>(rules: T[]): T[] {
  const seen = new Map<string, number>();
  for (const rule of rules) {
    const n = (seen.get(rule.id) ?? 0) + 1;
    seen.set(rule.id, n);
    if (n > 1) rule.id = `${rule.id}#${n}`;
  }
  return rules;
}

// --- notify -------------------------------------------------------------------------

const NOTIFY_KEYS = ["on", "collection", "to", "subject", "body", "when", "channels", "submitterEmailField", "excludeActor", "link"];

export function compileNotify(value: unknown, ctx: RuleContext, root: string): NotifyRule[] {
  const code: ErrorCode = "notify_invalid";
  const path = at(root, "notify");
  return uniqueIds(ruleList(value, path, code).map((raw, index) => {
    const rPath = at(path, index);
    const rule = expectObject(raw, rPath, code);
    onlyKeys(rule, NOTIFY_KEYS, rPath, code);
    const on = ruleOn(rule.on, at(rPath, "on"), code);
    const collection = ruleCollection(rule.collection, ctx, at(rPath, "collection"), code);
    const toPath = at(rPath, "to");
    const to = expectStringList(required(rule, "to", rPath, code), toPath, code, { nonEmpty: true }, (target, tPath) => {
      if (["owner", "members", "author", "creator"].includes(target)) return;
      if (target === "submitter") {
        if (!ctx.limits.NOTIFY_EXTERNAL_ENABLED) {
          fail("notify_submitter_not_enabled", tPath, "the submitter target needs external sending, which this relay has off (NOTIFY_EXTERNAL_ENABLED)");
        }
        return;
      }
      if (target.startsWith("role:")) {
        const role = target.slice(5);
        if (["owner", "member", "members", "anyone", "agent"].includes(role)) fail(code, tPath, `role: names custom roles only; use "${role === "owner" ? "owner" : "members"}" for the built-in`);
        if (!Object.hasOwn(ctx.roles, role)) fail(code, tPath, `names an undeclared role "${role}"`);
        return;
      }
      if (target.startsWith("field:")) {
        const relation = target.slice(6);
        if (!Object.hasOwn(collection.relations, relation)) fail(code, tPath, `"${relation}" is not a relation of collection "${collection.name}"`);
        return;
      }
      fail(code, tPath, "must be owner, members, submitter, author, creator, role:<role> or field:<relation> (literal addresses are refused)");
    });
    const when = rule.when === undefined ? null : compileCondition(rule.when, at(rPath, "when"), code, { collection, allowEdge: true, on });
    const channels: NotifyChannel[] = rule.channels === undefined
      ? ["email"]
      : expectStringList(rule.channels, at(rPath, "channels"), code, { nonEmpty: true }, (channel, cPath) => {
        expectEnum(channel, ["email", "inapp", "push"], cPath, code);
        if (channel === "inapp" && !ctx.limits.NOTIFY_INAPP_ENABLED) fail("notify_channel_not_enabled", cPath, "in-app notifications are not enabled on this relay");
        if (channel === "push") {
          if (!ctx.limits.NOTIFY_PUSH_ENABLED) fail("notify_channel_not_enabled", cPath, "push notifications are not enabled on this relay");
          if (ctx.context.visibility !== undefined && ctx.context.visibility !== "public") fail("notify_channel_not_enabled", cPath, "push needs a public app");
          if (!ctx.offline) fail(code, cPath, "push needs offline: true");
        }
      }) as NotifyChannel[];
    let submitterEmailField: string | null = null;
    if (rule.submitterEmailField !== undefined) {
      submitterEmailField = checkField(rule.submitterEmailField, collection, at(rPath, "submitterEmailField"), code);
    } else if (to.includes("submitter")) {
      fail(code, at(rPath, "submitterEmailField"), "is required when to includes submitter");
    }
    const subject = expectString(required(rule, "subject", rPath, code), at(rPath, "subject"), code, { nonBlank: true, singleLine: true });
    checkTemplate(subject, at(rPath, "subject"), code);
    const body = expectString(required(rule, "body", rPath, code), at(rPath, "body"), code, { nonBlank: true });
    checkTemplate(body, at(rPath, "body"), code);
    const defaultExclude = !(to.every((t) => t === "owner" || t === "members" || t === "submitter") && channels.length === 1 && channels[0] === "email");
    const excludeActor = rule.excludeActor === undefined ? defaultExclude : expectBoolean(rule.excludeActor, at(rPath, "excludeActor"), code);
    let link: string | null = null;
    if (rule.link !== undefined) {
      const lPath = at(rPath, "link");
      link = expectString(rule.link, lPath, code, { max: 2048, singleLine: true });
      if (!link.startsWith("/") || link.startsWith("//") || /[\s\\]/.test(link)) fail(code, lPath, "must be a same-origin path starting with /");
      if (/[{}]/.test(link)) fail(code, lPath, "must not contain placeholders");
    }
    const id = stableHash({ kind: "notify", on, collection: collection.name, to, when });
    return { id, index, on, collection: collection.name, to, subject, body, when, channels, submitterEmailField, excludeActor, link };
  }));
}

// --- schedules ----------------------------------------------------------------------

const EMAIL_KEYS = ["to", "subject", "body"];
const WEBHOOK_KEYS = ["url", "urlFromSetting", "connection", "bodyTemplate"];
const SCHEDULE_KEYS = ["collection", "dateField", "offsetDays", "when", ...EMAIL_KEYS, ...WEBHOOK_KEYS];

export function compileSchedules(value: unknown, ctx: RuleContext, root: string): ScheduleRule[] {
  const code: ErrorCode = "schedule_invalid";
  const path = at(root, "schedules");
  return uniqueIds(ruleList(value, path, code, ctx.limits.SCHEDULES_MAX_RULES).map((raw, index) => {
    const rPath = at(path, index);
    const rule = expectObject(raw, rPath, code);
    if ("on" in rule) fail(code, at(rPath, "on"), "schedules have no on key: they fire from dateField");
    onlyKeys(rule, SCHEDULE_KEYS, rPath, code);
    const collection = ruleCollection(rule.collection, ctx, at(rPath, "collection"), code);
    const dateField = checkField(required(rule, "dateField", rPath, code), collection, at(rPath, "dateField"), code);
    const offsetDays = rule.offsetDays === undefined ? 0 : expectInteger(rule.offsetDays, at(rPath, "offsetDays"), code);
    const when = rule.when === undefined ? null : compileCondition(rule.when, at(rPath, "when"), code, { collection, allowEdge: false, on: null });
    const hasUrl = rule.url !== undefined || rule.urlFromSetting !== undefined;
    const emailKeys = EMAIL_KEYS.filter((k) => rule[k] !== undefined);
    const webhookOnly = WEBHOOK_KEYS.filter((k) => rule[k] !== undefined);
    let action: ScheduleAction;
    if (hasUrl) {
      if (emailKeys.length > 0) fail(code, at(rPath, emailKeys[0]), `"${emailKeys[0]}" belongs to the email action; a rule has exactly one action and this one has url`);
      const target = compileTarget(rule, ctx, rPath, code);
      const connection = rule.connection === undefined ? null : expectString(rule.connection, at(rPath, "connection"), code, { pattern: CONNECTION_NAME, patternHint: "a connection name" });
      const bodyTemplate = rule.bodyTemplate === undefined ? null : checkBodyTemplate(rule.bodyTemplate, at(rPath, "bodyTemplate"), code);
      action = { kind: "webhook", ...target, connection, bodyTemplate };
    } else if (emailKeys.length > 0) {
      if (webhookOnly.length > 0) fail(code, at(rPath, webhookOnly[0]), `"${webhookOnly[0]}" belongs to the webhook action; a rule has exactly one action`);
      const to = expectStringList(required(rule, "to", rPath, code), at(rPath, "to"), code, { nonEmpty: true }, (t, tPath) => {
        if (t !== "owner" && t !== "members") fail(code, tPath, 'schedule emails go only to "owner" or "members"');
      }) as ("owner" | "members")[];
      const subject = expectString(required(rule, "subject", rPath, code), at(rPath, "subject"), code, { nonBlank: true, singleLine: true });
      checkTemplate(subject, at(rPath, "subject"), code);
      const body = expectString(required(rule, "body", rPath, code), at(rPath, "body"), code, { nonBlank: true });
      checkTemplate(body, at(rPath, "body"), code);
      action = { kind: "email", to, subject, body };
    } else {
      return fail(code, rPath, "needs exactly one action: email (to, subject, body) or webhook (url or urlFromSetting)");
    }
    const identity = action.kind === "webhook"
      ? { url: action.url, urlFromSetting: action.urlFromSetting, bodyTemplate: action.bodyTemplate }
      : { email: true };
    const id = stableHash({ kind: "schedule", collection: collection.name, dateField, offsetDays, ...identity });
    return { id, index, collection: collection.name, dateField, offsetDays, when, action };
  }));
}

/** Exactly one of `url` / `urlFromSetting`. */
function compileTarget(rule: JsonObject, ctx: RuleContext, rPath: string, code: ErrorCode): { url: string | null; urlFromSetting: string | null } {
  if (rule.url !== undefined && rule.urlFromSetting !== undefined) fail(code, at(rPath, "urlFromSetting"), "use exactly one of url and urlFromSetting");
  if (rule.url === undefined && rule.urlFromSetting === undefined) fail(code, at(rPath, "url"), "is required (or urlFromSetting)");
  if (rule.url !== undefined) {
    const uPath = at(rPath, "url");
    // A relative url goes to the instance of the rule's connection (WIRE §6.1); only the
    // connection can say where that is, so without one it is refused here.
    if (typeof rule.url === "string" && isRelativeTarget(rule.url)) {
      if (rule.connection === undefined) fail(code, uPath, "a relative url needs a connection (an oauth2 connection with instanceField) to resolve against");
      return { url: checkRelativeTarget(rule.url, uPath, code), urlFromSetting: null };
    }
    return { url: checkTargetUrl(rule.url, uPath, code, ctx.limits.development, ctx.context.deploying === true), urlFromSetting: null };
  }
  const sPath = at(rPath, "urlFromSetting");
  if (!ctx.settingsCollection) fail(code, sPath, "needs a settingsCollection to read the url from");
  const settings = ctx.collections[ctx.settingsCollection];
  const field = checkField(rule.urlFromSetting, settings, sPath, code);
  return { url: null, urlFromSetting: field };
}

// --- webhooks -----------------------------------------------------------------------

const WEBHOOK_RULE_KEYS = ["on", "collection", "when", "url", "urlFromSetting", "connection", "bodyTemplate", "machineAuthorKinds"];

export function compileWebhooks(value: unknown, ctx: RuleContext, root: string): WebhookRule[] {
  const code: ErrorCode = "webhook_invalid";
  const path = at(root, "webhooks");
  return uniqueIds(ruleList(value, path, code).map((raw, index) => {
    const rPath = at(path, index);
    const rule = expectObject(raw, rPath, code);
    onlyKeys(rule, WEBHOOK_RULE_KEYS, rPath, code);
    const on = ruleOn(rule.on, at(rPath, "on"), code);
    const collection = ruleCollection(rule.collection, ctx, at(rPath, "collection"), code);
    const when = rule.when === undefined ? null : compileCondition(rule.when, at(rPath, "when"), code, { collection, allowEdge: true, on });
    const target = compileTarget(rule, ctx, rPath, code);
    const connection = rule.connection === undefined ? null : expectString(rule.connection, at(rPath, "connection"), code, { pattern: CONNECTION_NAME, patternHint: "a connection name" });
    const bodyTemplate = rule.bodyTemplate === undefined ? null : checkBodyTemplate(rule.bodyTemplate, at(rPath, "bodyTemplate"), code);
    const machineAuthorKinds = machineKinds(rule.machineAuthorKinds, at(rPath, "machineAuthorKinds"), code);
    const id = stableHash({ kind: "webhook", on, collection: collection.name, ...target, bodyTemplate, when });
    return { id, index, on, collection: collection.name, when, ...target, connection, bodyTemplate, machineAuthorKinds };
  }));
}

// --- agentTasks ---------------------------------------------------------------------

const TASK_KEYS = ["on", "collection", "when", "taskType", "prompt", "reads", "writes", "ttlSeconds", "leaseSeconds", "machineAuthorKinds"];

export function compileAgentTasks(value: unknown, ctx: RuleContext, root: string): AgentTaskRule[] {
  const code: ErrorCode = "agent_task_invalid";
  const path = at(root, "agentTasks");
  const declared = (name: string, p: string) => {
    if (!own(ctx.collections, name)) fail(code, p, `names an undeclared collection "${name}"`);
  };
  const rules = uniqueIds(ruleList(value, path, code).map((raw, index) => {
    const rPath = at(path, index);
    const rule = expectObject(raw, rPath, code);
    onlyKeys(rule, TASK_KEYS, rPath, code);
    const on = ruleOn(rule.on, at(rPath, "on"), code);
    const collection = ruleCollection(rule.collection, ctx, at(rPath, "collection"), code);
    const when = rule.when === undefined ? null : compileCondition(rule.when, at(rPath, "when"), code, { collection, allowEdge: true, on });
    const taskType = expectString(required(rule, "taskType", rPath, code), at(rPath, "taskType"), code, { nonBlank: true, max: 64, singleLine: true });
    const prompt = expectString(required(rule, "prompt", rPath, code), at(rPath, "prompt"), code, { nonBlank: true, max: 4000 });
    const writes = rule.writes === undefined ? [] : expectStringList(rule.writes, at(rPath, "writes"), code, {}, declared);
    const reads = rule.reads === undefined ? [] : expectStringList(rule.reads, at(rPath, "reads"), code, {}, declared);
    const ttlSeconds = rule.ttlSeconds === undefined ? null : expectInteger(rule.ttlSeconds, at(rPath, "ttlSeconds"), code, { min: 1 });
    const leaseSeconds = rule.leaseSeconds === undefined ? null : expectInteger(rule.leaseSeconds, at(rPath, "leaseSeconds"), code, { min: 1 });
    const machineAuthorKinds = machineKinds(rule.machineAuthorKinds, at(rPath, "machineAuthorKinds"), code);
    const allReads = [...reads, ...writes.filter((w) => !reads.includes(w))];
    const id = stableHash({ kind: "agentTask", on, collection: collection.name, taskType, prompt });
    return { id, index, on, collection: collection.name, when, taskType, prompt, reads: allReads, writes, ttlSeconds, leaseSeconds, machineAuthorKinds };
  }));
  // A rule that fires on machine writes must not write where a task rule fires: a task's
  // own write-back is a machine write, so that would loop.
  const firedOn = new Set(rules.map((r) => r.collection));
  rules.forEach((rule) => {
    const admitsMachines = rule.machineAuthorKinds.length > 0 ||
      (rule.when?.kind === "authorKind" && rule.when.op === "in" && rule.when.kinds.some((k) => MACHINE_AUTHOR_KINDS.includes(k)));
    if (!admitsMachines) return;
    rule.writes.forEach((w, j) => {
      if (firedOn.has(w)) {
        fail(code, at(at(at(path, rule.index), "writes"), j), `a rule that admits machine authors cannot write into "${w}", which an agent task rule fires on (it would loop)`);
      }
    });
  });
  return rules;
}

// --- ingest -------------------------------------------------------------------------

const INGEST_KEYS = ["name", "collection", "mode", "upsertOn", "map", "dedupeKey", "handshake", "verify", "wake"];
const HOOK_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const DOT_PATH = /^[^.\s\u0000-\u001f]+(\.[^.\s\u0000-\u001f]+)*$/;
const HEADER_NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

export function compileIngest(value: unknown, ctx: RuleContext, root: string): IngestRule[] {
  const code: ErrorCode = "ingest_invalid";
  const path = at(root, "ingest");
  const names = new Set<string>();
  return ruleList(value, path, code, ctx.limits.INGEST_MAX_HOOKS).map((raw, index) => {
    const rPath = at(path, index);
    const rule = expectObject(raw, rPath, code);
    onlyKeys(rule, INGEST_KEYS, rPath, code);
    const name = expectString(required(rule, "name", rPath, code), at(rPath, "name"), code, { pattern: HOOK_NAME, patternHint: "[a-z0-9][a-z0-9_-]{0,63}" });
    if (names.has(name)) fail(code, at(rPath, "name"), `duplicate hook name "${name}"`);
    names.add(name);
    const collection = ruleCollection(rule.collection, ctx, at(rPath, "collection"), code);
    const mode = rule.mode === undefined ? "append" : expectEnum(rule.mode, ["append", "upsert"], at(rPath, "mode"), code);
    let upsertOn: string | null = null;
    if (mode === "upsert") {
      const uPath = at(rPath, "upsertOn");
      upsertOn = expectString(required(rule, "upsertOn", rPath, code), uPath, code);
      if (!collection.unique.includes(upsertOn)) fail(code, uPath, `"${upsertOn}" must be one of collection "${collection.name}"'s unique fields`);
    } else if (rule.upsertOn !== undefined) {
      fail(code, at(rPath, "upsertOn"), 'is only allowed with mode "upsert"');
    }
    let map: Record<string, string> | null = null;
    if (rule.map !== undefined) {
      const mPath = at(rPath, "map");
      const m = expectObject(rule.map, mPath, code);
      map = {};
      for (const [target, source] of Object.entries(m)) {
        const tPath = at(mPath, target);
        checkField(target, collection, tPath, code);
        if (typeof source !== "string" || !DOT_PATH.test(source)) fail(code, tPath, "must be a dot-path string into the body, such as \"a.b\" or \"items.0.id\"");
        map[target] = source;
      }
    }
    let dedupeKey: IngestRule["dedupeKey"] = null;
    if (rule.dedupeKey !== undefined) {
      const dPath = at(rPath, "dedupeKey");
      const d = expectString(rule.dedupeKey, dPath, code);
      if (d.startsWith("header:")) {
        const header = d.slice(7);
        if (!HEADER_NAME.test(header)) fail(code, dPath, "header:<name> takes a lowercase header name (alphanumeric start, interior -, at most 64)");
        dedupeKey = { kind: "header", header };
      } else {
        if (!DOT_PATH.test(d)) fail(code, dPath, 'must be a body dot-path or "header:<lowercase-name>"');
        dedupeKey = { kind: "path", path: d };
      }
    }
    const handshake = rule.handshake === undefined ? null : expectEnum(rule.handshake, ["echo"], at(rPath, "handshake"), code);
    let verify: IngestRule["verify"] = null;
    if (rule.verify !== undefined) {
      const vPath = at(rPath, "verify");
      const v = expectObject(rule.verify, vPath, code, '{ "scheme": "github" }');
      onlyKeys(v, ["scheme"], vPath, code);
      expectEnum(v.scheme, ["github"], at(vPath, "scheme"), code);
      verify = { scheme: "github" };
    }
    const wake = rule.wake === undefined ? false : expectBoolean(rule.wake, at(rPath, "wake"), code);
    return { name, collection: collection.name, mode, upsertOn, map, dedupeKey, handshake, verify, wake };
  });
}
