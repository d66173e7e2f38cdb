// Unique values are case-folded, not just lower-cased: "Straße" and "STRASSE", final and
// medial sigma, and compatibility forms ("ﬁ" and "fi") share a slot. Slots stored under
// the earlier format (lower-casing only) are rebuilt from the live rows the next time the
// store loads the manifest, the first row by insertion keeping a value two rows now share.
import { describe, expect, it, vi } from "vitest";
import { expectError } from "../helpers";
import { manifestOf, setup, type Ctx } from "./fixtures";

vi.setConfig({ testTimeout: 30_000 });

const clash = async (ctx: Ctx, code: string) => {
  const e = await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("free"), { json: { data: { code } } }), 409, "unique_conflict"));
  expect(e.details).toEqual({ field: "code", collection: "free" });
};

describe("unique values are case-folded", () => {
  it("beyond lower-casing: ß/SS, final sigma, compatibility ligatures, full-width forms", async () => {
    const ctx = await setup();
    const pairs: Array<[string, string]> = [["Straße", "STRASSE"], ["ΟΔΟΣ", "οδος"], ["ﬁle", "FILE"], ["ＡＢＣ", "abc"]];
    for (const [stored, other] of pairs) {
      await ctx.create("free", { code: stored });
      await clash(ctx, other);
    }
    // Different letters stay different.
    await ctx.create("free", { code: "strase" });
  });

  it("slots of the earlier format are rebuilt when the store next loads the manifest", async () => {
    const ctx = await setup(manifestOf());
    const first = await ctx.create("free", { code: "Straße" });
    const second = await ctx.create("free", { code: "placeholder" });
    // Make the store look like one written before the fold changed: two rows whose values
    // differed when lower-cased, their lower-cased slots, and no format mark.
    await ctx.sql((sql, instance) => {
      sql.exec("UPDATE _svc_rows SET data = ? WHERE collection = 'free' AND key = ?", JSON.stringify({ code: "STRASSE" }), second.key);
      sql.exec("UPDATE _svc_unique SET value = 's:straße' WHERE key = ?", first.key);
      sql.exec("UPDATE _svc_unique SET value = 's:strasse' WHERE key = ?", second.key);
      sql.exec("DELETE FROM _svc_meta WHERE key = 'unique_format'");
      (instance as unknown as { manifests: { current: unknown } }).manifests.current = null;
    });
    // The next call loads the manifest again and rebuilds: the older row keeps the slot.
    await ctx.list("free");
    await clash(ctx, "strasse");
    const slots = await ctx.sql((sql) => sql.exec<{ key: string; value: string }>("SELECT key, value FROM _svc_unique WHERE collection = 'free' AND field = 'code'").toArray());
    expect(slots).toEqual([{ key: first.key, value: "s:strasse" }]);
  });
});
