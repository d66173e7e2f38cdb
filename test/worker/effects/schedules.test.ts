// Schedules end to end (WIRE §5.5 schedules[], CONTRACT §3): an app with a timezone and
// schedule rules, rows with due dates, and `POST /__dev/cron` with `{ now }` at chosen
// instants. Reminders land in the development outbox (D1 `dev_mail`) from 08:00 local,
// once per (rule, row, date); webhook actions reach the loopback receiver as signed
// deliveries with op "schedule". Dates are fixed days in the past, so every zone's offset
// on them is known; the sweeps' other work at those instants touches nothing recent.
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { call, claimedAgent, json, signIn, type SignedIn } from "../helpers";
import { waitFor } from "../../support/wait";
import type { ReceivedRequest } from "../../support/webhook-receiver-types";
import { runSchedules } from "../../../src/effects/schedules/scan";
import { signatureHeader } from "../../../src/effects/webhooks/sign";

const receiver = inject("webhookReceiver");
type Obj = Record<string, unknown>;

interface Deployed {
  human: SignedIn;
  key: string;
  appId: string;
  webhookSecret?: string;
  rows: string;
}

/** Deploys an app with a `todos` collection and these schedule rules, in `timezone` (none when null). */
async function deployWith(schedules: Obj[], timezone: string | null, human?: SignedIn): Promise<Deployed> {
  const owner = human ?? await signIn();
  const key = (await claimedAgent(owner)).api_key;
  const manifest = {
    "x-service-manifest": {
      app: { name: "Reminders" },
      collections: { todos: { read: ["owner"], write: ["owner"], delete: ["owner"] } },
      schedules,
    },
  };
  const app = await json<{ app_id: string; webhook_secret?: string; warnings?: string[] }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest } }), 201);
  expect(app.warnings ?? []).toContainEqual(expect.stringMatching(/^schedules: the app has no timezone/));
  if (timezone !== null) {
    expect(await json(await call(`/v1/apps/${app.app_id}`, { key, method: "PATCH", json: { timezone } }), 200)).toMatchObject({ timezone });
  }
  return { human: owner, key, appId: app.app_id, webhookSecret: app.webhook_secret, rows: `/v1/apps/${app.app_id}/collections/todos` };
}

async function addRows(app: Deployed, rows: Array<{ key: string; data: Obj }>): Promise<void> {
  await json(await call(`${app.rows}/batch`, { key: app.key, json: { rows } }), 200);
}

/** Runs every sweep as if at `now` (an ISO instant with an offset). */
async function cronAt(now: string): Promise<void> {
  const ran = await json<{ ran: string[] }>(await call("/__dev/cron", { method: "POST", json: { now } }), 200);
  expect(ran.ran).toContain("schedules");
}

interface Mail { subject: string; text: string; html: string }

/** The mail an address got whose subject starts with `prefix`, oldest first. */
async function mailTo(email: string, prefix: string): Promise<Mail[]> {
  const { results } = await env.DB.prepare(`SELECT subject, text, html FROM dev_mail WHERE "to" = ?1 AND subject LIKE ?2 ORDER BY created_at, id`)
    .bind(email, `${prefix}%`).all<Mail>();
  return results;
}

async function subjectsTo(email: string, prefix: string): Promise<string[]> {
  return (await mailTo(email, prefix)).map((mail) => mail.subject).sort();
}

function inbox(): string {
  return `sched-${crypto.randomUUID().slice(0, 8)}`;
}

async function requestsAt(name: string): Promise<ReceivedRequest[]> {
  return (await (await fetch(`${receiver}/log/${name}`)).json()) as ReceivedRequest[];
}

async function received(name: string, count: number): Promise<ReceivedRequest[]> {
  return waitFor(async () => {
    const log = await requestsAt(name);
    return log.length >= count ? log : null;
  }, { timeout: 30_000, interval: 100, message: `${count} request(s) at inbox ${name}` });
}

/** The test environment with some settings changed, as the relay would read them. */
function envWith(settings: Record<string, unknown>): Env {
  return { ...env, ...settings } as Env;
}

const reminder = (subject: string, extra: Obj = {}) => ({ collection: "todos", dateField: "due", to: ["owner"], subject, body: "{{title}} is due {{due}}.", ...extra });

describe("schedules", { timeout: 60_000 }, () => {
  it("reminders go out from 08:00 local, once per row and day, to the owner and the members; the next day's rows the next day", async () => {
    const app = await deployWith([reminder("Due today: {{title}}", { to: ["owner", "members"], body: "{{title}} is due {{due}}.\nNote: {{note}}{{missing}}" })], "America/Los_Angeles");
    const friend = await signIn();
    await json(await call(`/v1/apps/${app.appId}/members`, { key: app.key, json: { email: friend.email } }), 201);
    await addRows(app, [
      { key: "rent", data: { title: "Pay rent", due: "2026-06-10", note: "<b>cash</b> & cheque" } },
      { key: "mom", data: { title: "Call mom", due: "2026-06-11" } },
      { key: "later", data: { title: "Later", due: "2026-06-20" } },
    ]);

    // Los Angeles is on daylight time (-07:00) in June.
    await cronAt("2026-06-10T07:59:00-07:00");
    expect(await mailTo(app.human.email, "Due today:")).toEqual([]);

    await cronAt("2026-06-10T08:01:00-07:00");
    const [mail, ...more] = await mailTo(app.human.email, "Due today:");
    expect(more).toEqual([]);
    expect(mail.subject).toBe("Due today: Pay rent");
    expect(mail.text).toMatch(/^Pay rent is due 2026-06-10\.\nNote: <b>cash<\/b> & cheque\n\n--\nA scheduled reminder from the app "Reminders" \(http:\/\/[^)]+\)\.\n$/);
    expect(mail.html).toContain("Pay rent is due 2026-06-10.<br>Note: &lt;b&gt;cash&lt;/b&gt; &amp; cheque");
    expect(await subjectsTo(friend.email, "Due today:")).toEqual(["Due today: Pay rent"]);

    await cronAt("2026-06-10T18:00:00-07:00");
    await cronAt("2026-06-10T23:59:00-07:00");
    expect(await subjectsTo(app.human.email, "Due today:")).toEqual(["Due today: Pay rent"]);

    // Two sweeps at once (the cron trigger beside a manual run): one scan, one mail each.
    await Promise.all([cronAt("2026-06-11T08:05:00-07:00"), cronAt("2026-06-11T09:00:00-07:00")]);
    expect(await subjectsTo(app.human.email, "Due today:")).toEqual(["Due today: Call mom", "Due today: Pay rent"]);
    expect(await subjectsTo(friend.email, "Due today:")).toEqual(["Due today: Call mom", "Due today: Pay rent"]);
    const firings = await env.DB.prepare("SELECT rule_id, row_key, local_date, action FROM schedule_firings WHERE app_id = ?1 ORDER BY local_date")
      .bind(app.appId).all<{ row_key: string; local_date: string; action: string }>();
    expect(firings.results.map((f) => [f.row_key, f.local_date, f.action])).toEqual([["rent", "2026-06-10", "email"], ["mom", "2026-06-11", "email"]]);
  });

  it("an app an archive import still owns is not scanned, nor its day marked: once handed over it is reminded the same day", async () => {
    const app = await deployWith([reminder("Half-made: {{title}}")], "UTC");
    await addRows(app, [{ key: "bill", data: { title: "Pay bill", due: "2026-07-01" } }]);
    const { owner } = (await env.DB.prepare("SELECT owner_human_id AS owner FROM apps WHERE id = ?1").bind(app.appId).first<{ owner: string }>())!;
    // As src/apps/archive does while it fills a new app (src/db/apps.ts importOwner).
    await env.DB.prepare("UPDATE apps SET owner_human_id = ?2 WHERE id = ?1").bind(app.appId, `import:imp_${app.appId}`).run();
    await cronAt("2026-07-01T08:01:00Z");
    expect(await mailTo(app.human.email, "Half-made:")).toEqual([]);
    expect(await env.DB.prepare("SELECT local_date FROM schedule_scans WHERE app_id = ?1").bind(app.appId).first()).toBeNull();

    await env.DB.prepare("UPDATE apps SET owner_human_id = ?2 WHERE id = ?1").bind(app.appId, owner).run();
    await cronAt("2026-07-01T09:00:00Z");
    expect(await subjectsTo(app.human.email, "Half-made:")).toEqual(["Half-made: Pay bill"]);
  });

  it("across a timezone boundary: the same instant is past 08:00 on the due day in Auckland, not in Los Angeles; an app without a timezone runs on UTC", async () => {
    const human = await signIn();
    const auckland = await deployWith([reminder("Boundary: {{title}}")], "Pacific/Auckland", human);
    const losAngeles = await deployWith([reminder("Boundary: {{title}}")], "America/Los_Angeles", human);
    const utc = await deployWith([reminder("Boundary: {{title}}")], null, human);
    await addRows(auckland, [{ key: "a", data: { title: "Auckland", due: "2026-07-15" } }]);
    await addRows(losAngeles, [{ key: "l", data: { title: "Los Angeles", due: "2026-07-15" } }]);
    await addRows(utc, [{ key: "u", data: { title: "UTC", due: "2026-07-15" } }]);

    // 08:30 on the 15th in Auckland (+12:00 in July) is 20:30Z on the 14th: 13:30 on the 14th in Los Angeles.
    await cronAt("2026-07-15T08:30:00+12:00");
    expect(await subjectsTo(human.email, "Boundary:")).toEqual(["Boundary: Auckland"]);

    // 07:30 on the 15th in Los Angeles (-07:00) is 14:30Z: 02:30 on the 16th in Auckland, past 08:00 in UTC.
    await cronAt("2026-07-15T07:30:00-07:00");
    expect(await subjectsTo(human.email, "Boundary:")).toEqual(["Boundary: Auckland", "Boundary: UTC"]);

    await cronAt("2026-07-15T08:30:00-07:00");
    expect(await subjectsTo(human.email, "Boundary:")).toEqual(["Boundary: Auckland", "Boundary: Los Angeles", "Boundary: UTC"]);
  });

  it("dates as epoch-ms and ISO datetimes are read in the app's timezone, unparseable ones skipped; when filters; offsets fire before and after", async () => {
    const app = await deployWith([
      reminder("Reminder, on the day: {{title}}", { when: { field: "done", equals: false } }),
      reminder("Reminder, in two days: {{title}}", { offsetDays: -2 }),
      reminder("Reminder, yesterday: {{title}}", { offsetDays: 1 }),
    ], "Pacific/Auckland");
    // The scan is for 2026-08-20 in Auckland (+12:00 in August).
    await addRows(app, [
      { key: "epoch", data: { title: "epoch", due: Date.parse("2026-08-19T21:00:00Z"), done: false } },
      { key: "iso", data: { title: "iso", due: "2026-08-19T21:00:00Z", done: false } },
      { key: "iso-offset", data: { title: "iso-offset", due: "2026-08-20T01:00:00-08:00", done: false } },
      { key: "plain", data: { title: "plain", due: "2026-08-20", done: false } },
      { key: "floating", data: { title: "floating", due: "2026-08-19T23:30:00", done: false } },
      { key: "tomorrow-there", data: { title: "tomorrow-there", due: "2026-08-20T12:00:00Z", done: false } },
      { key: "garbage", data: { title: "garbage", due: "next tuesday", done: false } },
      { key: "impossible", data: { title: "impossible", due: "2026-02-30", done: false } },
      { key: "done", data: { title: "done", due: "2026-08-20", done: true } },
      { key: "no-done", data: { title: "no-done", due: "2026-08-20" } },
      { key: "no-date", data: { title: "no-date", done: false } },
      { key: "soon", data: { title: "soon", due: "2026-08-22" } },
    ]);
    await cronAt("2026-08-20T08:15:00+12:00");
    expect(await subjectsTo(app.human.email, "Reminder,")).toEqual([
      "Reminder, in two days: soon",
      "Reminder, on the day: epoch", "Reminder, on the day: iso", "Reminder, on the day: iso-offset", "Reminder, on the day: plain",
      "Reminder, yesterday: floating",
    ]);
  });

  it("SCHEDULES_ENABLED=false scans nothing; the daily caps hold per action kind, and a later sweep the same day adds nothing", async () => {
    const name = inbox();
    const app = await deployWith([
      reminder("Capped {{title}}"),
      { collection: "todos", dateField: "due", url: `${receiver}/hook/${name}` },
    ], "UTC");
    await addRows(app, Array.from({ length: 22 }, (_, i) => ({ key: `row-${String(i).padStart(2, "0")}`, data: { title: `#${i}`, due: "2026-09-05" } })));
    const now = Date.parse("2026-09-05T09:00:00Z");

    expect(await runSchedules(envWith({ SCHEDULES_ENABLED: "false" }), now)).toBe(0);
    expect(await mailTo(app.human.email, "Capped")).toEqual([]);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM schedule_scans WHERE app_id = ?1").bind(app.appId).first<{ n: number }>()).toEqual({ n: 0 });

    await runSchedules(envWith({ SCHEDULES_MAX_WEBHOOKS_PER_APP_DAY: "1" }), now);
    expect(await mailTo(app.human.email, "Capped")).toHaveLength(20);
    expect(await received(name, 1)).toHaveLength(1);
    const deliveries = await env.DB.prepare("SELECT op FROM webhook_deliveries WHERE app_id = ?1").bind(app.appId).all();
    expect(deliveries.results).toEqual([{ op: "schedule" }]);

    await cronAt("2026-09-05T20:00:00Z");
    expect(await mailTo(app.human.email, "Capped")).toHaveLength(20);
    expect(await requestsAt(name)).toHaveLength(1);
  });

  it("a webhook action reaches the receiver signed, op schedule and feed_seq null, or as its body template; the journal shows it and a replay re-sends it", async () => {
    const before = inbox();
    const onTheDay = inbox();
    const app = await deployWith([
      { collection: "todos", dateField: "due", offsetDays: -1, url: `${receiver}/hook/${before}?token=abc` },
      { collection: "todos", dateField: "due", url: `${receiver}/hook/${onTheDay}`, bodyTemplate: '{"reminder": {{title}}, "due": {{due}}, "missing": {{nope}}}' },
    ], "Europe/Paris");
    expect(app.webhookSecret).toMatch(/^whsec_/);
    await addRows(app, [{ key: "ship", data: { title: "Ship it", due: "2026-10-03" } }]);

    // Paris is on summer time (+02:00) in early October.
    await cronAt("2026-10-02T07:59:00+02:00");
    expect(await requestsAt(before)).toEqual([]);
    await cronAt("2026-10-02T08:01:00+02:00");
    const [request] = await received(before, 1);
    expect(request.path).toBe(`/hook/${before}?token=abc`);
    expect(request.headers).toMatchObject({ "content-type": "application/json", "x-service-event": "schedule", "x-service-collection": "todos" });
    const t = Number(/^t=(\d+),/.exec(request.headers["x-service-signature"])![1]);
    expect(request.headers["x-service-signature"]).toBe(await signatureHeader([app.webhookSecret!], t, request.body));
    const body = JSON.parse(request.body) as Obj;
    expect(Object.keys(body).sort()).toEqual(["app_id", "collection", "delivery_id", "feed_seq", "op", "row", "sent_at"]);
    expect(body).toMatchObject({ app_id: app.appId, collection: "todos", op: "schedule", feed_seq: null, delivery_id: request.headers["x-service-delivery"] });
    expect(body.row).toMatchObject({ key: "ship", data: { title: "Ship it", due: "2026-10-03" }, version: 1 });
    expect(await requestsAt(onTheDay)).toEqual([]);

    await cronAt("2026-10-03T08:01:00+02:00");
    const [templated] = await received(onTheDay, 1);
    expect(templated.body).toBe('{"reminder": "Ship it", "due": "2026-10-03", "missing": null}');
    expect(templated.headers["x-service-event"]).toBe("schedule");
    expect(await requestsAt(before)).toHaveLength(1);

    const journal = await waitFor(async () => {
      const list = (await json<{ deliveries: Array<{ id: string; op: string; status: string; rowKey: string }> }>(
        await call(`/v1/apps/${app.appId}/webhooks/deliveries`, { key: app.key }), 200)).deliveries;
      return list.length === 2 && list.every((d) => d.status === "delivered") ? list : null;
    }, { message: "both schedule deliveries journaled as delivered" });
    expect(journal.map((d) => [d.op, d.rowKey])).toEqual([["schedule", "ship"], ["schedule", "ship"]]);
    const first = journal.find((d) => d.id === request.headers["x-service-delivery"])!;
    const replay = await json<{ delivery: { id: string } }>(await call(`/v1/apps/${app.appId}/webhooks/deliveries/${first.id}/replay`, { key: app.key, method: "POST" }), 200);
    const [, again] = await received(before, 2);
    expect(again.headers["x-service-delivery"]).toBe(replay.delivery.id);
    expect(JSON.parse(again.body)).toMatchObject({ op: "schedule", feed_seq: null, delivery_id: replay.delivery.id });
  });
});
