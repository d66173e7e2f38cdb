// The row's creator travels in the change the store records (EffectChange.creator): a
// member's row updated by the owner's agent is recorded with the member as creator and the
// agent as author, and a `creator` notify target reaches the person the change names
// without the engine reading the row back (the change below names a key the store never
// held). An entry recorded before the store carried the creator still falls back.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers";
import { addMember, createAs, deployNotify, notifyManifest, personKey, recordedFor, sessionOf } from "./notify-fixtures";
import { recordNotifications } from "../../../src/effects/notify/fire";
import type { EffectChange } from "../../../durable-objects/app-store/contract";
import { holdEagerFlush } from "./hold-outbox";

const NOTES = { read: ["member"], write: ["member"], update: ["member"], delete: ["owner"] };
const RULES = [
  { on: "create", collection: "notes", to: ["owner"], subject: "New {{title}}", body: "b" },
  { on: "update", collection: "notes", to: ["creator"], subject: "Your note {{title}} changed", body: "b", channels: ["email"] },
];

describe("the creator in the recorded change", { timeout: 60_000 }, () => {
  it("is recorded with each write, and the creator target reads it from the change", async () => {
    const t = await deployNotify(notifyManifest({ notes: NOTES }, RULES));
    const member = await addMember(t);
    const stub = env.APP_STORE.get(env.APP_STORE.idFromName(t.app.app_id));
    // Hold the flush (the commit's own hand-over and the alarm), so the entries stay to be read.
    await holdEagerFlush(t.app.app_id);
    const hold = () => runInDurableObject(stub, (_instance, state) => state.storage.deleteAlarm());
    const key = await createAs(t, await sessionOf(t, member), "notes", { title: "Plan" });
    await hold();
    await json(await call(`${t.rows("notes")}/${key}`, { key: t.key, method: "PATCH", json: { data: { title: "Plan B" } } }), 200);
    await hold();
    const changes = await runInDurableObject(stub, (_instance, state) => state.storage.sql.exec<{ payload: string }>("SELECT payload FROM _svc_outbox ORDER BY id").toArray()
      .map((entry) => JSON.parse(entry.payload) as EffectChange));
    const memberAuthor = { kind: "human", id: member.humanId };
    expect(changes.map((c) => ({ op: c.op, creator: c.creator, author: c.author.kind }))).toEqual([
      { op: "create", creator: memberAuthor, author: "human" },
      { op: "update", creator: memberAuthor, author: "agent" },
    ]);

    // A change for a row the store does not hold: only the change can say who created it.
    const ruleId = (await runInDurableObject(stub, (_instance, state) => state.storage.sql.exec<{ rule_id: string }>("SELECT rule_id FROM _svc_outbox WHERE kind = 'notify' ORDER BY id DESC LIMIT 1").toArray()))[0].rule_id;
    const ghost: EffectChange = { ...changes[1], key: `ghost-${crypto.randomUUID().slice(0, 8)}` };
    expect(await recordNotifications(env, t.app.app_id, `test:${ghost.key}`, ruleId, ghost)).toBe(1);
    expect(await recordedFor(t.app.app_id, ghost.key)).toEqual([{ recipient: personKey(member), channel: "email", status: "held", reason: null }]);

    // An older entry without the creator falls back to the row, which this key never was: nobody.
    const { creator: _dropped, ...older } = { ...changes[1], key: `older-${crypto.randomUUID().slice(0, 8)}` };
    expect(await recordNotifications(env, t.app.app_id, `test:${older.key}`, ruleId, older)).toBe(0);
  });
});
