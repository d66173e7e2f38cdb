// Notification mail end to end, through the real parts: a row write records the notify
// rule in the AppStore's outbox, the alarm hands a pointer to the real queue, the
// consumer records one notification per recipient in D1, and the recipient's digest goes
// through a queue message when its window (3 s in development) ends, into the
// development outbox (`dev_mail`). Covered: the owner on create with the rendered
// subject and body; members, role and relation targets; a member who may not read the
// row and a person who is not in the app, suppressed and recorded; excludeActor; a burst of five writes as one digest per
// recipient; the app's hourly cap; a submitter confirmed once per row; quiet batches;
// a pointer delivered again that sends nothing twice; and production mail through an
// HTTP mail API (MAIL_HTTP_URL) instead of the send_email binding.
import { createExecutionContext, createMessageBatch, env, getQueueResult, runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { holdEagerFlush } from "./hold-outbox";
import { call, json, signIn } from "../helpers";
import { quietFor, waitFor } from "../../support/wait";
import {
  addMember, create, createAs, deployNotify, mailsTo, notifyManifest, personKey, recordedFor, sessionOf, type Mail,
} from "./notify-fixtures";
import type { ReceivedRequest } from "../../support/webhook-receiver-types";
import { recordNotifications } from "../../../src/effects/notify/fire";
import { mailer } from "../../../src/mail/mailer";

const receiver = inject("webhookReceiver");

/** Long enough for a digest window (3 s in development) to close and its mail to land. */
const MAIL_WAIT = { timeout: 30_000, interval: 100 };
/** A little more than one digest window: what would still arrive has arrived by then. */
const AFTER_WINDOW_MS = 4_500;

const NOTES = { read: ["member"], write: ["member"], delete: ["owner"] };

async function mailed(address: string, count = 1): Promise<Mail[]> {
  return waitFor(async () => {
    const mails = await mailsTo(address);
    return mails.length >= count ? mails : null;
  }, { ...MAIL_WAIT, message: `${count} notification mail(s) to ${address}` });
}

describe("notify: email", { timeout: 60_000 }, () => {
  it("mails the owner on create with the rule's subject and body rendered from the row, escaped in the HTML twin", async () => {
    const t = await deployNotify(notifyManifest({ notes: NOTES }, [{
      on: "create", collection: "notes", to: ["owner"], subject: "New note: {{title}}", body: "{{title}} ({{count}}) by {{who}}\n{{missing}}-- end", link: "/notes",
    }]));
    const key = await create(t, "notes", { title: "Rent <b>due</b>", count: 3, who: "Ann" });
    const [mail] = await mailed(t.who.human.email);
    expect(mail.subject).toBe("New note: Rent <b>due</b>");
    expect(mail.text).toMatch(/^Rent <b>due<\/b> \(3\) by Ann\n-- end\n\nOpen: http:\/\/[a-z0-9-]+\.localhost:8787\/notes\n/);
    expect(mail.text).toContain('You get this mail because the app "Notes & Co" notifies you of changes to its data.');
    expect(mail.html).toContain("Rent &lt;b&gt;due&lt;/b&gt; (3) by Ann<br>-- end");
    expect(mail.html).not.toContain("<b>due</b>");
    expect(mail.html).toContain("Notes &amp; Co");
    expect(await recordedFor(t.app.app_id, key)).toEqual([{ recipient: personKey(t.who.human), channel: "email", status: "sent", reason: null }]);
  });

  it("members reach the owner and every member; role: reaches holders of the role and of roles including it", async () => {
    const t = await deployNotify(notifyManifest({ notes: NOTES }, [
      { on: "create", collection: "notes", to: ["members"], subject: "Team: {{title}}", body: "A note for everyone." },
      { on: "create", collection: "notes", to: ["role:writer"], subject: "Writers: {{title}}", body: "A note for writers." },
    ]));
    const chief = await addMember(t, ["chief"]);
    const plain = await addMember(t);
    await create(t, "notes", { title: "Plan" });

    // The chief is reached by both rules at once: one digest.
    const [digest] = await mailed(chief.email);
    expect(digest.subject).toBe("2 notifications from Notes & Co");
    expect(digest.text).toContain("* Team: Plan\nA note for everyone.");
    expect(digest.text).toContain("* Writers: Plan\nA note for writers.");
    const [ownerMail] = await mailed(t.who.human.email);
    const [plainMail] = await mailed(plain.email);
    expect([ownerMail.subject, plainMail.subject]).toEqual(["Team: Plan", "Team: Plan"]);
    await quietFor(AFTER_WINDOW_MS);
    expect((await mailsTo(plain.email)).map((m) => m.subject)).toEqual(["Team: Plan"]);
    expect((await mailsTo(chief.email))).toHaveLength(1);
  });

  it("a member who may not read the row is suppressed and recorded; field: names the person a relation holds, a non-member suppressed", async () => {
    const t = await deployNotify(notifyManifest(
      { secrets: { read: ["owner", "writer"], write: ["owner"], delete: ["owner"], relations: { assignee: { field: "assignee" } } } },
      [
        { on: "create", collection: "secrets", to: ["members"], subject: "Secret: {{title}}", body: "Shh." },
        { on: "create", collection: "secrets", to: ["field:assignee"], subject: "Assigned: {{title}}", body: "Yours." },
      ],
    ));
    const writer = await addMember(t, ["writer"]);
    const outsider = await addMember(t);
    const stranger = await signIn();
    const key = await create(t, "secrets", { title: "Vault code", assignee: stranger.humanId });
    await mailed(writer.email);
    await mailed(t.who.human.email);
    const byRecipient = (a: { recipient: string }, b: { recipient: string }) => a.recipient.localeCompare(b.recipient);
    expect(await recordedFor(t.app.app_id, key)).toEqual([
      { recipient: personKey(writer), channel: "email", status: "sent", reason: null },
      { recipient: personKey(outsider), channel: "email", status: "suppressed", reason: "may not read the row" },
      { recipient: personKey(stranger), channel: "email", status: "suppressed", reason: "not the owner or a member of the app" },
      { recipient: personKey(t.who.human), channel: "email", status: "sent", reason: null },
    ].sort(byRecipient));
    expect(await mailsTo(outsider.email)).toEqual([]);
    expect(await mailsTo(stranger.email)).toEqual([]);

    const assigned = await create(t, "secrets", { title: "Keys", assignee: writer.humanId });
    const [digest] = await waitFor(async () => {
      const mails = (await mailsTo(writer.email)).filter((m) => m.text.includes("Keys"));
      return mails.length > 0 ? mails : null;
    }, { ...MAIL_WAIT, message: "the assignee told" });
    expect(digest.text).toContain("* Assigned: Keys\nYours.");
    expect((await recordedFor(t.app.app_id, assigned)).filter((r) => r.recipient === personKey(writer)).map((r) => r.status)).toEqual(["sent", "sent"]);
  });

  it("excludeActor leaves out the person who wrote (by default once a target is not owner/members); false tells the writer too", async () => {
    const t = await deployNotify(notifyManifest({ notes: NOTES }, [
      { on: "create", collection: "notes", to: ["members"], subject: "Skip me: {{title}}", body: "x", excludeActor: true },
      { on: "create", collection: "notes", to: ["author"], subject: "Default: {{title}}", body: "y" },
      { on: "create", collection: "notes", to: ["author"], subject: "Tell me: {{title}}", body: "z", excludeActor: false },
    ]));
    const writer = await addMember(t);
    const other = await addMember(t);
    const key = await createAs(t, await sessionOf(t, writer), "notes", { title: "Mine" });

    expect((await mailed(writer.email)).map((m) => m.subject)).toEqual(["Tell me: Mine"]);
    expect((await mailed(other.email)).map((m) => m.subject)).toEqual(["Skip me: Mine"]);
    expect((await mailed(t.who.human.email)).map((m) => m.subject)).toEqual(["Skip me: Mine"]);
    await quietFor(AFTER_WINDOW_MS);
    expect((await mailsTo(writer.email)).map((m) => m.subject)).toEqual(["Tell me: Mine"]);
    expect((await recordedFor(t.app.app_id, key)).filter((r) => r.recipient === personKey(writer))).toEqual([
      { recipient: personKey(writer), channel: "email", status: "sent", reason: null },
    ]);
  });

  it("a burst of five writes reaches each recipient as one digest listing all five", async () => {
    const t = await deployNotify(notifyManifest({ notes: NOTES }, [
      { on: "create", collection: "notes", to: ["owner", "members"], subject: "Added {{title}}", body: "Item {{title}}" },
    ]));
    const member = await addMember(t);
    await Promise.all([1, 2, 3, 4, 5].map((n) => create(t, "notes", { title: `#${n}` })));
    for (const address of [t.who.human.email, member.email]) {
      const [digest] = await mailed(address);
      expect(digest.subject).toBe("5 notifications from Notes & Co");
      for (const n of [1, 2, 3, 4, 5]) {
        expect(digest.text).toContain(`* Added #${n}\nItem #${n}`);
        expect(digest.html).toContain(`<strong>Added #${n}</strong>`);
      }
    }
    await quietFor(AFTER_WINDOW_MS);
    expect(await mailsTo(t.who.human.email)).toHaveLength(1);
    expect(await mailsTo(member.email)).toHaveLength(1);
  });

  it("past the app's hourly cap notifications are recorded as capped and nothing is sent", async () => {
    const t = await deployNotify(notifyManifest({ notes: NOTES }, [
      { on: "create", collection: "notes", to: ["owner"], subject: "Capped {{title}}", body: "z" },
    ]));
    // This hour's window (and the next, should the hour turn meanwhile) already holds the cap.
    const hour = 3_600_000;
    const start = Math.floor(Date.now() / hour) * hour;
    for (const windowStart of [start, start + hour]) {
      await env.DB.prepare("INSERT INTO rate_limit_windows (bucket, window_start, hits) VALUES (?1, ?2, 200)").bind(`notify:${t.app.app_id}`, windowStart).run();
    }
    const key = await create(t, "notes", { title: "one too many" });
    const [record] = await waitFor(async () => {
      const rows = await recordedFor(t.app.app_id, key);
      return rows[0]?.status === "capped" ? rows : null;
    }, { ...MAIL_WAIT, message: "the notification capped" });
    expect(record.reason).toBe("the app's hourly notification cap (200) is reached");
    expect(await mailsTo(t.who.human.email)).toEqual([]);
  });

  it("a submitter is confirmed at most once per row per rule; an implausible address is dropped without a record", async () => {
    const t = await deployNotify(notifyManifest({ signups: { read: ["owner"], write: ["owner"], delete: ["owner"] } }, [
      { on: "update", collection: "signups", to: ["submitter"], submitterEmailField: "email", subject: "Thanks, {{name}}", body: "We got it." },
      { on: "update", collection: "signups", to: ["owner"], subject: "Updated {{name}}", body: "Updated {{name}}" },
    ]));
    const address = `Signer-${crypto.randomUUID().slice(0, 8)}@Example.com`;
    const good = await create(t, "signups", { name: "Sam", email: ` ${address} ` });
    const bad = await create(t, "signups", { name: "Nobody", email: "not an address" });
    const patch = (key: string, data: Record<string, unknown>) => call(`${t.rows("signups")}/${key}`, { key: t.key, method: "PATCH", json: { data } });
    await json(await patch(good, { name: "Sam", email: address }), 200);
    await json(await patch(bad, { name: "Nobody", email: "not an address" }), 200);
    const [first] = await mailed(address);
    expect(first).toMatchObject({ to: address.toLowerCase(), subject: "Thanks, Sam" });
    expect(first.text).toContain('this address was entered in the app "Notes & Co"');

    await json(await patch(good, { name: "Sam again", email: address }), 200);
    // The owner's mail for the second update is the sign that its entries were handled.
    await waitFor(async () => (await mailsTo(t.who.human.email)).some((m) => m.text.includes("Updated Sam again")), { ...MAIL_WAIT, message: "the owner told of the second update" });
    await quietFor(AFTER_WINDOW_MS);
    expect((await mailsTo(address)).map((m) => m.subject)).toEqual(["Thanks, Sam"]);
    expect((await recordedFor(t.app.app_id, good)).filter((r) => r.recipient.startsWith("address:"))).toEqual([
      { recipient: `address:${address.toLowerCase()}`, channel: "email", status: "sent", reason: null },
    ]);
    expect((await recordedFor(t.app.app_id, bad)).filter((r) => r.recipient.startsWith("address:"))).toEqual([]);
  });

  it("a quiet batch notifies nobody; an emitEffects batch does", async () => {
    const t = await deployNotify(notifyManifest({ notes: NOTES }, [
      { on: "create", collection: "notes", to: ["owner"], subject: "Batch {{title}}", body: "b" },
    ]));
    const quiet = await json<{ results: Array<{ key: string }> }>(await call(`${t.rows("notes")}/batch`, { key: t.key, json: { rows: [{ data: { title: "quiet" } }] } }), 200);
    await json(await call(`${t.rows("notes")}/batch`, { key: t.key, json: { rows: [{ data: { title: "loud" } }], emitEffects: true } }), 200);
    await mailed(t.who.human.email);
    await quietFor(AFTER_WINDOW_MS);
    expect((await mailsTo(t.who.human.email)).map((m) => m.subject)).toEqual(["Batch loud"]);
    expect(await recordedFor(t.app.app_id, quiet.results[0].key)).toEqual([]);
  });

  it("an outbox pointer delivered twice side by side and again later, or recorded again, sends one mail", async () => {
    const t = await deployNotify(notifyManifest({ notes: NOTES }, [
      { on: "create", collection: "notes", to: ["owner"], subject: "Once {{title}}", body: "o" },
    ]));
    const stub = env.APP_STORE.get(env.APP_STORE.idFromName(t.app.app_id));
    // Take the flush away from the store, so only the batches below hand the entry over.
    await holdEagerFlush(t.app.app_id);
    const key = await create(t, "notes", { title: "only" });
    const entries = await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.deleteAlarm();
      return state.storage.sql.exec<{ id: number; rule_id: string; payload: string }>("SELECT id, rule_id, payload FROM _svc_outbox").toArray();
    });
    expect(entries).toHaveLength(1);
    const pointer = { outbox_id: `${t.app.app_id}:${entries[0].id}`, app_id: t.app.app_id, entry_id: Number(entries[0].id), kind: "notify", rule_id: entries[0].rule_id };
    const worker = (await import("../../../workers/relay")).default;
    const deliver = async (id: string) => {
      const batch = createMessageBatch("relay-effects", [{ id, timestamp: new Date(), attempts: 1, body: pointer }]);
      const ctx = createExecutionContext();
      await worker.queue(batch, env, ctx);
      return getQueueResult(batch, ctx);
    };
    const [first, second] = await Promise.all([deliver("m1"), deliver("m2")]);
    expect([...first.explicitAcks, ...second.explicitAcks].sort()).toEqual(["m1", "m2"]);
    expect((await deliver("m3")).explicitAcks).toEqual(["m3"]);
    // A consumer whose settle failed finds its record when the pointer comes back.
    expect(await recordNotifications(env, t.app.app_id, pointer.outbox_id, pointer.rule_id, JSON.parse(entries[0].payload))).toBe(0);

    await mailed(t.who.human.email);
    await quietFor(AFTER_WINDOW_MS);
    expect((await mailsTo(t.who.human.email)).map((m) => m.subject)).toEqual(["Once only"]);
    expect(await recordedFor(t.app.app_id, key)).toHaveLength(1);
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.sql.exec("SELECT id FROM _svc_outbox").toArray())).toEqual([]);
  });

  it("production sends mail as a JSON POST to MAIL_HTTP_URL with the MAIL_HTTP_TOKEN bearer; a refusal throws", async () => {
    const name = `mail-${crypto.randomUUID().slice(0, 8)}`;
    const production = { ...env, RELAY_ENV: "production", MAIL_HTTP_URL: `${receiver}/hook/${name}`, MAIL_HTTP_TOKEN: "mail-token" } as unknown as Env;
    const message = { to: "someone@example.com", subject: "Hello", text: "Plain", html: "<p>Rich</p>" };
    await mailer(production).send(message);
    const log = (await (await fetch(`${receiver}/log/${name}`)).json()) as ReceivedRequest[];
    expect(log).toHaveLength(1);
    expect(log[0].headers).toMatchObject({ authorization: "Bearer mail-token", "content-type": "application/json" });
    expect(JSON.parse(log[0].body)).toEqual({ from: "relay@example.com", ...message });

    expect((await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ status: 500 }) })).status).toBe(204);
    await expect(mailer(production).send(message)).rejects.toThrow("the mail API answered 500");
  });
});
