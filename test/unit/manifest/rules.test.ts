// The rule arrays: notify, schedules, webhooks, agentTasks, ingest, each with its own code.
import { describe, expect } from "vitest";
import { manifest, notes, table, withNotes, X } from "./helpers";

const relations = { assignee: { field: "owner_id", set: "writer" } };
const roles = { staff: { label: "Staff" } };
/** A manifest with collections notes (+ relation) and summaries, settings, plus `ext`. */
const app = (ext: Record<string, unknown>) => manifest({
  roles,
  collections: {
    notes: notes({ relations, unique: ["slug"] }),
    summaries: { read: ["owner"], write: ["owner"], delete: ["owner"] },
    settings: { schema: { $ref: "#/$defs/Note" }, read: ["owner"], write: ["owner"], delete: ["owner"] },
  },
  settingsCollection: "settings",
  ...ext,
});

const N = `${X}.notify[0]`;
const notify = (rule: Record<string, unknown>, ext: Record<string, unknown> = {}) =>
  app({ notify: [{ on: "create", collection: "notes", to: ["owner"], subject: "New note {{title}}", body: "{{body}}", ...rule }], ...ext });

describe("notify", () => {
  table([
    { name: "basic email to owner", input: notify({}), check: (m) => expect(m.notify[0]).toMatchObject({ on: "create", collection: "notes", to: ["owner"], channels: ["email"], excludeActor: false, when: null, link: null }) },
    { name: "every plain target", input: notify({ to: ["owner", "members", "author", "creator", "role:staff", "field:assignee"] }), check: (m) => expect(m.notify[0].excludeActor).toBe(true) },
    { name: "unknown key", input: notify({ cc: ["owner"] }), code: "notify_invalid", path: `${N}.cc` },
    { name: "not an array", input: app({ notify: {} }), code: "notify_invalid", path: `${X}.notify` },
    { name: "rule not an object", input: app({ notify: ["x"] }), code: "notify_invalid", path: N },
    { name: "on missing", input: notify({ on: undefined }), code: "notify_invalid", path: `${N}.on` },
    { name: "on delete", input: notify({ on: "delete" }), code: "notify_invalid", path: `${N}.on` },
    { name: "undeclared collection", input: notify({ collection: "ghost" }), code: "notify_invalid", path: `${N}.collection` },
    { name: "collection named like a prototype member", input: notify({ collection: "constructor" }), code: "notify_invalid", path: `${N}.collection` },
    { name: "to empty", input: notify({ to: [] }), code: "notify_invalid", path: `${N}.to` },
    { name: "literal address", input: notify({ to: ["someone@example.com"] }), code: "notify_invalid", path: `${N}.to[0]` },
    { name: "role: on a built-in", input: notify({ to: ["role:member"] }), code: "notify_invalid", path: `${N}.to[0]` },
    { name: "role: undeclared", input: notify({ to: ["owner", "role:ghost"] }), code: "notify_invalid", path: `${N}.to[1]` },
    { name: "field: not a relation", input: notify({ to: ["field:owner_id"] }), code: "notify_invalid", path: `${N}.to[0]` },
    { name: "duplicate target", input: notify({ to: ["owner", "owner"] }), code: "notify_invalid", path: `${N}.to[1]` },
    { name: "submitter when external sending is off", input: notify({ to: ["submitter"], submitterEmailField: "email" }), code: "notify_submitter_not_enabled", path: `${N}.to[0]` },
    { name: "submitter without its field", input: notify({ to: ["submitter"] }), limits: { NOTIFY_EXTERNAL_ENABLED: true }, code: "notify_invalid", path: `${N}.submitterEmailField` },
    { name: "submitter with an undeclared field", input: notify({ to: ["submitter"], submitterEmailField: "mail" }), limits: { NOTIFY_EXTERNAL_ENABLED: true }, code: "notify_invalid", path: `${N}.submitterEmailField` },
    { name: "submitter enabled", input: notify({ to: ["submitter", "owner"], submitterEmailField: "email" }), limits: { NOTIFY_EXTERNAL_ENABLED: true }, check: (m) => expect(m.notify[0].excludeActor).toBe(false) },
    { name: "inapp when disabled", input: notify({ channels: ["email", "inapp"] }), code: "notify_channel_not_enabled", path: `${N}.channels[1]` },
    { name: "inapp when enabled", input: notify({ channels: ["inapp"] }), limits: { NOTIFY_INAPP_ENABLED: true }, check: (m) => expect(m.notify[0].excludeActor).toBe(true) },
    { name: "push when disabled", input: notify({ channels: ["push"] }, { offline: true }), code: "notify_channel_not_enabled", path: `${N}.channels[0]` },
    { name: "push on a private app", input: notify({ channels: ["push"] }, { offline: true }), limits: { NOTIFY_PUSH_ENABLED: true }, context: { visibility: "private" }, code: "notify_channel_not_enabled", path: `${N}.channels[0]` },
    { name: "push without offline", input: notify({ channels: ["push"] }), limits: { NOTIFY_PUSH_ENABLED: true }, context: { visibility: "public" }, code: "notify_invalid", path: `${N}.channels[0]` },
    { name: "push on a public offline app", input: notify({ channels: ["push"], link: "/inbox" }, { offline: true }), limits: { NOTIFY_PUSH_ENABLED: true }, context: { visibility: "public" } },
    { name: "unknown channel", input: notify({ channels: ["sms"] }), code: "notify_invalid", path: `${N}.channels[0]` },
    { name: "channels empty", input: notify({ channels: [] }), code: "notify_invalid", path: `${N}.channels` },
    { name: "subject missing", input: notify({ subject: undefined }), code: "notify_invalid", path: `${N}.subject` },
    { name: "subject with a newline", input: notify({ subject: "a\nb" }), code: "notify_invalid", path: `${N}.subject` },
    { name: "placeholder with a path", input: notify({ subject: "{{a.b}}" }), code: "notify_invalid", path: `${N}.subject` },
    { name: "unbalanced placeholder", input: notify({ body: "Hello {{title" }), code: "notify_invalid", path: `${N}.body` },
    { name: "excludeActor set", input: notify({ excludeActor: true }), check: (m) => expect(m.notify[0].excludeActor).toBe(true) },
    { name: "excludeActor not boolean", input: notify({ excludeActor: "no" }), code: "notify_invalid", path: `${N}.excludeActor` },
    { name: "link absolute url", input: notify({ link: "https://evil.example.com/" }), code: "notify_invalid", path: `${N}.link` },
    { name: "link protocol-relative", input: notify({ link: "//evil.example.com/" }), code: "notify_invalid", path: `${N}.link` },
    { name: "link with a placeholder", input: notify({ link: "/notes/{{key}}" }), code: "notify_invalid", path: `${N}.link` },
  ]);
});

describe("when conditions", () => {
  const when = (w: unknown, on = "create") => notify({ on, when: w });
  table([
    { name: "equals", input: when({ field: "done", equals: true }), check: (m) => expect(m.notify[0].when).toEqual({ kind: "level", field: "done", op: "equals", value: true }) },
    { name: "in", input: when({ field: "title", in: ["a", "b"] }) },
    { name: "gte", input: when({ field: "price", gte: 10 }) },
    { name: "changedTo on update", input: when({ field: "done", changedTo: true }, "update"), check: (m) => expect(m.notify[0].when?.kind).toBe("edge") },
    { name: "authorKindIn", input: when({ authorKindIn: ["human", "visitor"] }), check: (m) => expect(m.notify[0].when).toEqual({ kind: "authorKind", op: "in", kinds: ["human", "visitor"] }) },
    { name: "authorKindNotIn", input: when({ authorKindNotIn: ["anon"] }) },
    { name: "no operator", input: when({ field: "done" }), code: "notify_invalid", path: `${N}.when` },
    { name: "two operators", input: when({ field: "done", equals: true, notEquals: false }), code: "notify_invalid", path: `${N}.when` },
    { name: "no field", input: when({ equals: true }), code: "notify_invalid", path: `${N}.when.field` },
    { name: "undeclared field", input: when({ field: "nope", equals: 1 }), code: "notify_invalid", path: `${N}.when.field` },
    { name: "field path", input: when({ field: "a.b", equals: 1 }), code: "notify_invalid", path: `${N}.when.field` },
    { name: "unknown operator", input: when({ field: "title", like: "x" }), code: "notify_invalid", path: `${N}.when.like` },
    { name: "in with an empty list", input: when({ field: "title", in: [] }), code: "notify_invalid", path: `${N}.when.in` },
    { name: "in with an object", input: when({ field: "title", in: ["a", {}] }), code: "notify_invalid", path: `${N}.when.in[1]` },
    { name: "equals null", input: when({ field: "title", equals: null }), code: "notify_invalid", path: `${N}.when.equals` },
    { name: "changedTo on create", input: when({ field: "done", changedTo: true }), code: "notify_invalid", path: `${N}.when.changedTo` },
    { name: "author kind beside a field", input: when({ authorKindIn: ["human"], field: "done" }), code: "notify_invalid", path: `${N}.when` },
    { name: "unknown author kind", input: when({ authorKindIn: ["robot"] }), code: "notify_invalid", path: `${N}.when.authorKindIn[0]` },
    { name: "empty author kinds", input: when({ authorKindNotIn: [] }), code: "notify_invalid", path: `${N}.when.authorKindNotIn` },
  ]);
});

const S = `${X}.schedules[0]`;
const schedule = (rule: Record<string, unknown>) => app({ schedules: [{ collection: "notes", dateField: "due", ...rule }] });
const email = { to: ["owner"], subject: "Due: {{title}}", body: "{{title}} is due" };

describe("schedules", () => {
  table([
    { name: "email action", input: schedule({ offsetDays: -1, ...email }), context: { timezone: "Europe/Paris" }, check: (m) => {
      expect(m.schedules[0].action).toEqual({ kind: "email", ...email });
      expect(m.warnings).toEqual([]);
    } },
    { name: "webhook action", input: schedule({ url: "https://hooks.example.com/due", bodyTemplate: "{\"title\": {{title}}}", connection: "crm" }), check: (m) => expect(m.schedules[0]).toMatchObject({ offsetDays: 0, action: { kind: "webhook", url: "https://hooks.example.com/due", connection: "crm" } }) },
    { name: "urlFromSetting", input: schedule({ urlFromSetting: "hook_url" }) },
    { name: "no timezone warns", input: schedule(email), check: (m) => expect(m.warnings[0]).toMatch(/^schedules: the app has no timezone/) },
    { name: "too many rules", input: app({ schedules: Array.from({ length: 11 }, () => ({ collection: "notes", dateField: "due", ...email })) }), code: "schedule_invalid", path: `${X}.schedules` },
    { name: "operator cap", input: app({ schedules: [{ collection: "notes", dateField: "due", ...email }, { collection: "notes", dateField: "due", ...email }] }), limits: { SCHEDULES_MAX_RULES: 1 }, code: "schedule_invalid", path: `${X}.schedules` },
    { name: "has an on key", input: schedule({ on: "create", ...email }), code: "schedule_invalid", path: `${S}.on` },
    { name: "unknown key", input: schedule({ ...email, cron: "* * *" }), code: "schedule_invalid", path: `${S}.cron` },
    { name: "undeclared collection", input: schedule({ collection: "ghost", ...email }), code: "schedule_invalid", path: `${S}.collection` },
    { name: "dateField missing", input: schedule({ dateField: undefined, ...email }), code: "schedule_invalid", path: `${S}.dateField` },
    { name: "dateField undeclared", input: schedule({ dateField: "when", ...email }), code: "schedule_invalid", path: `${S}.dateField` },
    { name: "offsetDays fraction", input: schedule({ offsetDays: 1.5, ...email }), code: "schedule_invalid", path: `${S}.offsetDays` },
    { name: "no action", input: schedule({}), code: "schedule_invalid", path: S },
    { name: "email key beside url", input: schedule({ url: "https://hooks.example.com/", subject: "x" }), code: "schedule_invalid", path: `${S}.subject` },
    { name: "webhook key beside email", input: schedule({ ...email, connection: "crm" }), code: "schedule_invalid", path: `${S}.connection` },
    { name: "email to creator", input: schedule({ ...email, to: ["creator"] }), code: "schedule_invalid", path: `${S}.to[0]` },
    { name: "email without body", input: schedule({ to: ["owner"], subject: "x" }), code: "schedule_invalid", path: `${S}.body` },
    { name: "url and urlFromSetting", input: schedule({ url: "https://hooks.example.com/", urlFromSetting: "hook_url" }), code: "schedule_invalid", path: `${S}.urlFromSetting` },
    { name: "plain http url", input: schedule({ url: "http://hooks.example.com/" }), code: "schedule_invalid", path: `${S}.url` },
    { name: "changedTo in a schedule", input: schedule({ ...email, when: { field: "done", changedTo: true } }), code: "schedule_invalid", path: `${S}.when.changedTo` },
    { name: "level when", input: schedule({ ...email, when: { field: "done", equals: false } }) },
  ]);
  table([
    { name: "urlFromSetting without settingsCollection", input: manifest({ collections: { notes: notes() }, schedules: [{ collection: "notes", dateField: "due", urlFromSetting: "hook_url" }] }), code: "schedule_invalid", path: `${S}.urlFromSetting` },
  ]);
});

const W = `${X}.webhooks[0]`;
const webhook = (rule: Record<string, unknown>) => app({ webhooks: [{ on: "create", collection: "notes", url: "https://hooks.example.com/in?x=1", ...rule }] });

describe("webhooks", () => {
  table([
    { name: "basic", input: webhook({}), check: (m) => expect(m.webhooks[0]).toMatchObject({ url: "https://hooks.example.com/in?x=1", urlFromSetting: null, machineAuthorKinds: [] }) },
    { name: "every key", input: webhook({ on: "update", when: { field: "done", changedTo: true }, connection: "crm-1", bodyTemplate: "{\"text\": {{title}}, \"n\": \"{{qty}}\"}", machineAuthorKinds: ["hook", "service"] }) },
    { name: "urlFromSetting", input: webhook({ url: undefined, urlFromSetting: "hook_url" }) },
    { name: "urlFromSetting undeclared field", input: webhook({ url: undefined, urlFromSetting: "nope" }), code: "webhook_invalid", path: `${W}.urlFromSetting` },
    { name: "unknown key", input: webhook({ method: "PUT" }), code: "webhook_invalid", path: `${W}.method` },
    { name: "on delete", input: webhook({ on: "delete" }), code: "webhook_invalid", path: `${W}.on` },
    { name: "undeclared collection", input: webhook({ collection: "ghost" }), code: "webhook_invalid", path: `${W}.collection` },
    { name: "no url", input: webhook({ url: undefined }), code: "webhook_invalid", path: `${W}.url` },
    { name: "plain http", input: webhook({ url: "http://hooks.example.com/" }), code: "webhook_invalid", path: `${W}.url` },
    { name: "userinfo", input: webhook({ url: "https://user:pw@hooks.example.com/" }), code: "webhook_invalid", path: `${W}.url` },
    { name: "IPv4 literal", input: webhook({ url: "https://10.0.0.1/x" }), code: "webhook_invalid", path: `${W}.url` },
    { name: "IPv6 literal", input: webhook({ url: "https://[2001:db8::1]/x" }), code: "webhook_invalid", path: `${W}.url` },
    { name: "localhost", input: webhook({ url: "https://localhost/x" }), code: "webhook_invalid", path: `${W}.url` },
    { name: "single-label host", input: webhook({ url: "https://intranet/x" }), code: "webhook_invalid", path: `${W}.url` },
    // The outbound guard's names are refused when deployed; a stored manifest is not judged anew (its sends are).
    { name: "an .internal host, deployed", input: webhook({ url: "https://hooks.corp.internal/x" }), context: { deploying: true }, code: "webhook_invalid", path: `${W}.url` },
    { name: "a metadata name, deployed", input: webhook({ url: "https://metadata.google.internal/x" }), context: { deploying: true }, code: "webhook_invalid", path: `${W}.url` },
    { name: "an .internal host in a stored manifest", input: webhook({ url: "https://hooks.corp.internal/x" }), check: (m) => expect(m.webhooks[0].url).toBe("https://hooks.corp.internal/x") },
    { name: "not a url", input: webhook({ url: "hooks.example.com" }), code: "webhook_invalid", path: `${W}.url` },
    { name: "loopback http in development", input: webhook({ url: "http://127.0.0.1:9999/hook" }), limits: { development: true } },
    { name: "loopback http in production", input: webhook({ url: "http://127.0.0.1:9999/hook" }), code: "webhook_invalid", path: `${W}.url` },
    { name: "bad connection name", input: webhook({ connection: "My CRM" }), code: "webhook_invalid", path: `${W}.connection` },
    { name: "bodyTemplate not JSON", input: webhook({ bodyTemplate: "{\"t\": {{title}}" }), code: "webhook_invalid", path: `${W}.bodyTemplate` },
    { name: "bodyTemplate with an expression", input: webhook({ bodyTemplate: "{\"t\": {{title + 1}}}" }), code: "webhook_invalid", path: `${W}.bodyTemplate` },
    { name: "bodyTemplate an object", input: webhook({ bodyTemplate: { t: 1 } }), code: "webhook_invalid", path: `${W}.bodyTemplate` },
    { name: "machineAuthorKinds human", input: webhook({ machineAuthorKinds: ["human"] }), code: "webhook_invalid", path: `${W}.machineAuthorKinds[0]` },
  ]);
});

const T = `${X}.agentTasks[0]`;
const task = (rule: Record<string, unknown>) => app({ agentTasks: [{ on: "create", collection: "notes", taskType: "summarize", prompt: "Summarize the note.", ...rule }] });

describe("agentTasks", () => {
  table([
    { name: "basic with reads and writes", input: task({ reads: ["notes"], writes: ["summaries"], ttlSeconds: 3600, leaseSeconds: 300 }), check: (m) => expect(m.agentTasks[0]).toMatchObject({ reads: ["notes", "summaries"], writes: ["summaries"], ttlSeconds: 3600, leaseSeconds: 300 }) },
    { name: "unknown key", input: task({ priority: 1 }), code: "agent_task_invalid", path: `${T}.priority` },
    { name: "on delete", input: task({ on: "delete" }), code: "agent_task_invalid", path: `${T}.on` },
    { name: "undeclared collection", input: task({ collection: "ghost" }), code: "agent_task_invalid", path: `${T}.collection` },
    { name: "taskType missing", input: task({ taskType: undefined }), code: "agent_task_invalid", path: `${T}.taskType` },
    { name: "taskType too long", input: task({ taskType: "t".repeat(65) }), code: "agent_task_invalid", path: `${T}.taskType` },
    { name: "prompt missing", input: task({ prompt: undefined }), code: "agent_task_invalid", path: `${T}.prompt` },
    { name: "prompt at 4000", input: task({ prompt: "p".repeat(4000) }) },
    { name: "prompt over 4000", input: task({ prompt: "p".repeat(4001) }), code: "agent_task_invalid", path: `${T}.prompt` },
    { name: "reads undeclared", input: task({ reads: ["ghost"] }), code: "agent_task_invalid", path: `${T}.reads[0]` },
    { name: "writes undeclared", input: task({ writes: ["notes", "ghost"] }), code: "agent_task_invalid", path: `${T}.writes[1]` },
    { name: "ttlSeconds zero", input: task({ ttlSeconds: 0 }), code: "agent_task_invalid", path: `${T}.ttlSeconds` },
    { name: "machine authors writing where a task fires", input: task({ machineAuthorKinds: ["hook"], writes: ["notes"] }), code: "agent_task_invalid", path: `${T}.writes[0]` },
    { name: "author-kind when admitting machines", input: task({ when: { authorKindIn: ["service"] }, writes: ["summaries", "notes"] }), code: "agent_task_invalid", path: `${T}.writes[1]` },
    { name: "machine authors writing elsewhere", input: task({ machineAuthorKinds: ["hook"], writes: ["summaries"] }) },
    { name: "human-only rule writing where it fires", input: task({ writes: ["notes"] }) },
  ]);
});

const I = `${X}.ingest[0]`;
const hook = (rule: Record<string, unknown>, extra: unknown[] = []) => app({ ingest: [{ name: "github", collection: "notes", ...rule }, ...extra] });

describe("ingest", () => {
  table([
    { name: "defaults", input: hook({}), check: (m) => expect(m.ingest[0]).toEqual({ name: "github", collection: "notes", mode: "append", upsertOn: null, map: null, dedupeKey: null, handshake: null, verify: null, wake: false }) },
    { name: "every key", input: hook({ mode: "upsert", upsertOn: "slug", map: { title: "issue.title", slug: "items.0.id" }, dedupeKey: "header:x-github-delivery", handshake: "echo", verify: { scheme: "github" }, wake: true }), check: (m) => expect(m.ingest[0].dedupeKey).toEqual({ kind: "header", header: "x-github-delivery" }) },
    { name: "body dedupeKey", input: hook({ dedupeKey: "delivery.id" }), check: (m) => expect(m.ingest[0].dedupeKey).toEqual({ kind: "path", path: "delivery.id" }) },
    { name: "too many hooks", input: app({ ingest: Array.from({ length: 11 }, (_, i) => ({ name: `h${i}`, collection: "notes" })) }), code: "ingest_invalid", path: `${X}.ingest` },
    { name: "unknown key", input: hook({ secret: "x" }), code: "ingest_invalid", path: `${I}.secret` },
    { name: "name missing", input: hook({ name: undefined }), code: "ingest_invalid", path: `${I}.name` },
    { name: "name uppercase", input: hook({ name: "GitHub" }), code: "ingest_invalid", path: `${I}.name` },
    { name: "duplicate name", input: hook({}, [{ name: "github", collection: "notes" }]), code: "ingest_invalid", path: `${X}.ingest[1].name` },
    { name: "undeclared collection", input: hook({ collection: "ghost" }), code: "ingest_invalid", path: `${I}.collection` },
    { name: "mode", input: hook({ mode: "replace" }), code: "ingest_invalid", path: `${I}.mode` },
    { name: "upsert without upsertOn", input: hook({ mode: "upsert" }), code: "ingest_invalid", path: `${I}.upsertOn` },
    { name: "upsertOn not unique", input: hook({ mode: "upsert", upsertOn: "title" }), code: "ingest_invalid", path: `${I}.upsertOn` },
    { name: "upsertOn with append", input: hook({ upsertOn: "slug" }), code: "ingest_invalid", path: `${I}.upsertOn` },
    { name: "map to an undeclared field", input: hook({ map: { nope: "a" } }), code: "ingest_invalid", path: `${I}.map.nope` },
    { name: "map value a number", input: hook({ map: { title: 5 } }), code: "ingest_invalid", path: `${I}.map.title` },
    { name: "map value a nested object", input: hook({ map: { title: { from: "a" } } }), code: "ingest_invalid", path: `${I}.map.title` },
    { name: "map empty segment", input: hook({ map: { title: "a..b" } }), code: "ingest_invalid", path: `${I}.map.title` },
    { name: "header dedupeKey uppercase", input: hook({ dedupeKey: "header:X-Id" }), code: "ingest_invalid", path: `${I}.dedupeKey` },
    { name: "header dedupeKey trailing dash", input: hook({ dedupeKey: "header:x-" }), code: "ingest_invalid", path: `${I}.dedupeKey` },
    { name: "handshake value", input: hook({ handshake: "ping" }), code: "ingest_invalid", path: `${I}.handshake` },
    { name: "verify scheme", input: hook({ verify: { scheme: "hmac" } }), code: "ingest_invalid", path: `${I}.verify.scheme` },
    { name: "verify a string", input: hook({ verify: "github" }), code: "ingest_invalid", path: `${I}.verify` },
    { name: "verify extra key", input: hook({ verify: { scheme: "github", header: "x" } }), code: "ingest_invalid", path: `${I}.verify.header` },
    { name: "wake value", input: hook({ wake: "yes" }), code: "ingest_invalid", path: `${I}.wake` },
  ]);
});

describe("warnings", () => {
  table([
    { name: "countRead anyone beside a row-scoped read", input: withNotes({ read: ["creator"], countRead: ["anyone"] }), check: (m) => expect(m.warnings).toEqual(['collections.notes: countRead ["anyone"] lets anyone count rows that the row-scoped read list hides from them']) },
    { name: "countRead anyone beside an open read", input: withNotes({ read: ["anyone"], countRead: ["anyone"] }), check: (m) => expect(m.warnings).toEqual([]) },
  ]);
});
