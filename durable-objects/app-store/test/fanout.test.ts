// The live fan-out's reader classes (fanout.ts): readers whose read filters agree over the
// collections a fan-out touches share one serialised frame, whoever they are; readers who
// read different rows get their own projection; a socket's cursor leaves out what a `sub`
// page already carried; and the frames are the wire's `entry` / `batch` to the letter.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseManifest } from "../../../src/manifest";
import type { Principal } from "../../../src/permissions";
import type { AppStore } from "../app-store";
import type { FeedEntry } from "../contract";
import { Fanout, ReadPlan } from "../fanout";
import type { HeldEntry } from "../feed";

const manifest = parseManifest({
  "x-service-manifest": {
    app: { name: "Fan-out" },
    collections: {
      notes: { read: ["anyone"], write: ["owner"], delete: ["owner"] },
      mine: { read: ["creator"], write: ["anyone"], update: ["creator"], delete: ["creator"] },
    },
  },
});

const agent = { kind: "agent", id: "01AGENT0000000000000000000" } as const;
const alice: Principal = { kind: "visitor", visitorId: "01ALICE0000000000000000000", ip: "198.18.0.1" };
const bob: Principal = { kind: "visitor", visitorId: "01BOB000000000000000000000", ip: "198.18.0.2" };
const passerA: Principal = { kind: "anonymous", ip: "198.18.0.3" };
const passerB: Principal = { kind: "anonymous", ip: "198.18.0.4" };

function entry(seq: number, collection: string, author: FeedEntry["author"]): HeldEntry {
  return {
    entry: { seq, op: "create", collection_name: collection, row_key: `K${seq}`, row_version: 1, data: { n: seq }, author, ts: "2026-11-26T00:00:00.000Z" },
    prior: null,
  };
}

describe("the live fan-out", () => {
  it("serialises each frame once per reader class and filters each class once", async () => {
    const store = env.APP_STORE.get(env.APP_STORE.newUniqueId());
    await runInDurableObject(store, async (_instance: AppStore, state) => {
      // Rows that are no longer stored are judged by the entry's author as creator.
      const held = [entry(1, "notes", agent), entry(2, "mine", { kind: "visitor", id: "01ALICE0000000000000000000" }), entry(3, "notes", agent)];
      const fanout = new Fanout(state.storage.sql, held);
      const plan = (principal: Principal) => new ReadPlan(1, manifest, principal);
      const [forAlice, forBob, forPasserA, forPasserB] = [alice, bob, passerA, passerB].map(plan);

      // Two passers-by read the same rows: one class, the very same frame strings.
      const passerFrames = fanout.framesFor(forPasserA, 0);
      expect(fanout.framesFor(forPasserB, 0)).toBe(passerFrames);
      expect(passerFrames.map((frame) => JSON.parse(frame))).toEqual([
        { type: "batch", entries: [held[0].entry, held[2].entry], cursor: 3, truncated: false },
      ]);
      // Bob reads `mine` through his own creator filter: another class, the same notes.
      expect(fanout.framesFor(forBob, 0)).not.toBe(passerFrames);
      expect(fanout.framesFor(forBob, 0)).toEqual(passerFrames);
      // Alice also sees her own row.
      expect(fanout.framesFor(forAlice, 0).map((frame) => JSON.parse(frame))).toEqual([
        { type: "batch", entries: held.map((item) => item.entry), cursor: 3, truncated: false },
      ]);
      // A socket whose sub page already carried seq 2 gets only seq 3, as one `entry` frame, field for field.
      expect(fanout.framesFor(forAlice, 2)).toEqual([`{"type":"entry","entry":${JSON.stringify(held[2].entry)}}`]);
      expect(Object.keys(JSON.parse(fanout.framesFor(forAlice, 2)[0]).entry)).toEqual(["seq", "op", "collection_name", "row_key", "row_version", "data", "author", "ts"]);
    });
  });
});
