// In-app notifications and notification preferences on the app origin (WIRE §4.2, §4.3),
// fed by the real path (row write → outbox → queue → consumer): each person's inbox is
// their own, listed newest first with `limit`, `unread=true` and `before=<id>`, counted
// unread and marked read by ids or all at once; the paths exist only when the app
// declares the inapp channel and need a person's app session. A muted channel records the
// notification as muted instead of delivering it.
import { describe, expect, it } from "vitest";
import { expectError, json } from "../helpers";
import { waitFor } from "../../support/wait";
import { appCall } from "../serve/helpers";
import { addMember, create, deployNotify, notifyManifest, personKey, recordedFor, sessionOf, type NotifyApp } from "./notify-fixtures";

const NOTES = { read: ["member"], write: ["member"], delete: ["owner"] };
const WAIT = { timeout: 30_000, interval: 100 };

interface Item {
  id: string; subject: string; body: string; link: string | null; collection_name: string; row_key: string; op: string; created_at: string; read_at: string | null;
}

function inboxApp(): Promise<NotifyApp> {
  return deployNotify(notifyManifest({ notes: NOTES }, [
    { on: "create", collection: "notes", to: ["members"], channels: ["inapp"], subject: "New: {{title}}", body: "{{title}} was added", link: "/notes" },
  ]));
}

async function list(t: NotifyApp, token: string, query = ""): Promise<{ notifications: Item[]; has_more: boolean }> {
  return json(await appCall(t.app.slug, `/_svc/notifications${query}`, { token }), 200);
}

async function unread(t: NotifyApp, token: string): Promise<number> {
  return (await json<{ count: number }>(await appCall(t.app.slug, "/_svc/notifications/count", { token }), 200)).count;
}

describe("notify: in-app", { timeout: 60_000 }, () => {
  it("lists, counts and marks read each person's own notifications", async () => {
    const t = await inboxApp();
    const member = await addMember(t);
    const [ownerSession, memberSession] = await Promise.all([sessionOf(t, t.who.human), sessionOf(t, member)]);
    // One at a time, each notification recorded for both people before the next write, so
    // "newest first" is the order of the writes (the queue does not promise an order).
    const keys: string[] = [];
    for (const [index, title] of ["one", "two", "three"].entries()) {
      keys.push(await create(t, "notes", { title }));
      await waitFor(async () => (await unread(t, ownerSession)) === index + 1 && (await unread(t, memberSession)) === index + 1,
        { ...WAIT, message: `${index + 1} unread for the owner and the member` });
    }

    const first = await list(t, ownerSession, "?limit=2");
    expect(first.has_more).toBe(true);
    expect(first.notifications.map((n) => n.subject)).toEqual(["New: three", "New: two"]);
    expect(first.notifications[0]).toEqual({
      id: expect.stringMatching(/^ntf_/), subject: "New: three", body: "three was added", link: "/notes", collection_name: "notes",
      row_key: keys[2], op: "create", created_at: expect.any(String), read_at: null,
    });
    const rest = await list(t, ownerSession, `?limit=2&before=${first.notifications[1].id}`);
    expect(rest).toMatchObject({ has_more: false, notifications: [{ subject: "New: one", row_key: keys[0] }] });

    const marked = await json<{ marked: number }>(await appCall(t.app.slug, "/_svc/notifications/read", { token: ownerSession, json: { ids: [first.notifications[0].id, "ntf_not_mine"] } }), 200);
    expect(marked.marked).toBe(1);
    expect(await unread(t, ownerSession)).toBe(2);
    expect((await list(t, ownerSession, "?unread=true")).notifications.map((n) => n.subject)).toEqual(["New: two", "New: one"]);
    expect((await list(t, ownerSession)).notifications[0].read_at).toEqual(expect.any(String));

    // The member's inbox is their own: the owner's reads changed nothing there, and ids of another's are ignored.
    expect(await unread(t, memberSession)).toBe(3);
    expect((await json<{ marked: number }>(await appCall(t.app.slug, "/_svc/notifications/read", { token: memberSession, json: { ids: [first.notifications[1].id] } }), 200)).marked).toBe(0);
    expect((await json<{ marked: number }>(await appCall(t.app.slug, "/_svc/notifications/read", { token: ownerSession, method: "POST" }), 200)).marked).toBe(2);
    expect(await unread(t, ownerSession)).toBe(0);
    expect(await unread(t, memberSession)).toBe(3);
  });

  it("a muted channel records the notification as muted; preferences read and set per person", async () => {
    const t = await inboxApp();
    const member = await addMember(t);
    const [ownerSession, memberSession] = await Promise.all([sessionOf(t, t.who.human), sessionOf(t, member)]);
    const prefs = (token: string) => appCall(t.app.slug, "/_svc/notifications/preferences", { token });
    expect(await json(await prefs(memberSession), 200)).toEqual({ notifiable: true, muted: { inapp: false } });
    expect(await json(await appCall(t.app.slug, "/_svc/notifications/preferences", { token: memberSession, method: "PUT", json: { channel: "inapp", muted: true } }), 200))
      .toEqual({ notifiable: true, muted: { inapp: true } });
    expect(await json(await prefs(ownerSession), 200)).toEqual({ notifiable: true, muted: { inapp: false } });
    await expectError(await appCall(t.app.slug, "/_svc/notifications/preferences", { token: memberSession, method: "PUT", json: { channel: "email", muted: true } }), 400, "invalid_request");

    const key = await create(t, "notes", { title: "quiet for some" });
    await waitFor(async () => (await unread(t, ownerSession)) === 1, { ...WAIT, message: "the owner's notification" });
    expect(await unread(t, memberSession)).toBe(0);
    expect((await recordedFor(t.app.app_id, key)).find((r) => r.recipient === personKey(member))).toEqual({ recipient: personKey(member), channel: "inapp", status: "muted", reason: null });
  });

  it("the inbox needs a person and an app with the inapp channel; preferences say null without notify rules", async () => {
    const t = await deployNotify(notifyManifest({ notes: NOTES }, [
      { on: "create", collection: "notes", to: ["members"], channels: ["inapp"], subject: "s", body: "b" },
    ]), "public");
    await expectError(await appCall(t.app.slug, "/_svc/notifications"), 401, "unauthorized");
    await expectError(await appCall(t.app.slug, "/_svc/notifications/count"), 401, "unauthorized");
    expect(await json(await appCall(t.app.slug, "/_svc/notifications/preferences"), 200)).toEqual({ notifiable: false, muted: { inapp: false } });
    await expectError(await appCall(t.app.slug, "/_svc/notifications/preferences", { method: "PUT", json: { channel: "inapp", muted: true } }), 401, "unauthorized");
    const session = await sessionOf(t, t.who.human);
    await expectError(await appCall(t.app.slug, "/_svc/notifications?limit=0", { token: session }), 400, "invalid_request");
    await expectError(await appCall(t.app.slug, "/_svc/notifications/read", { token: session, json: { ids: [] } }), 400, "invalid_request");
    await expectError(await appCall(t.app.slug, "/_svc/notifications/count", { token: session, method: "DELETE" }), 405, "method_not_allowed");

    const mailOnly = await deployNotify(notifyManifest({ notes: NOTES }, [{ on: "create", collection: "notes", to: ["owner"], subject: "s", body: "b" }]), "public");
    const mailSession = await sessionOf(mailOnly, mailOnly.who.human);
    await expectError(await appCall(mailOnly.app.slug, "/_svc/notifications", { token: mailSession }), 404, "not_found");
    expect(await json(await appCall(mailOnly.app.slug, "/_svc/notifications/preferences", { token: mailSession }), 200)).toEqual({ notifiable: true, muted: { email: false } });

    const silent = await deployNotify(notifyManifest({ notes: NOTES }, []), "public");
    expect(await json(await appCall(silent.app.slug, "/_svc/notifications/preferences"), 200)).toBeNull();
  });
});
