// D1 takes at most 100 bound parameters a statement; the local runtime does not enforce
// it, so these tests count what each list-taking statement binds (on the real binding,
// test/worker/counting-d1.ts). A list bound through inList (src/db/in-list.ts) is one
// JSON parameter whatever its length, and still selects exactly its members.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { db } from "../../src/db/client";
import { humans } from "../../src/db/schema";
import { inList } from "../../src/db/in-list";
import { markRead } from "../../src/effects/notify/inbox";
import { publishersOf } from "../../src/community/submission-views";
import { countingD1 } from "./counting-d1";
import { signIn } from "./helpers";

const strangers = (count: number, prefix: string) => Array.from({ length: count }, (_, i) => `${prefix}_${i}`);

describe("statements that take lists bind at most D1's 100 parameters", () => {
  it("inList binds 500 ids as one parameter and selects exactly the listed rows", async () => {
    const [first, second] = [await signIn(), await signIn()];
    const d1 = countingD1();
    const listed = [...strangers(499, "hum_nobody"), first.humanId];
    const rows = await db({ DB: d1.DB }).select({ id: humans.id }).from(humans).where(inList(humans.id, listed));
    expect(rows.map((row) => row.id)).toEqual([first.humanId]);
    expect(rows.map((row) => row.id)).not.toContain(second.humanId);
    expect(d1.mostBound()).toBe(1);
  });

  it("marking 100 notifications read, and naming the publishers of 150 submissions", async () => {
    const human = await signIn();
    const marking = countingD1();
    expect(await markRead({ ...env, DB: marking.DB } as Env, "app_none", human.humanId, strangers(100, "ntf_nobody"))).toBe(0);
    expect(marking.mostBound()).toBeLessThanOrEqual(100);

    const naming = countingD1();
    const found = await publishersOf({ DB: naming.DB }, strangers(150, "hum_publisher").map((publisherHumanId) => ({ publisherHumanId })));
    expect(found.size).toBe(0);
    expect(naming.mostBound()).toBeLessThanOrEqual(100);
  });
});
