// Development mode holds D1 and the app store's SQLite to Cloudflare's per-statement limits
// (src/db/production-limits.ts: 100 bound parameters, 100,000 bytes of SQL text, 2,000,000
// bytes a string or BLOB), which the local runtime would let pass: a statement over one
// fails here, named, as it would in production; production mode leaves the bindings as they are.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { withProductionLimits } from "../../src/db/production-limits";

const selectOf = (count: number) => `SELECT ${Array.from({ length: count }, (_, i) => `?${i + 1}`).join(", ")}`;
const numbers = (count: number) => Array.from({ length: count }, (_, i) => i);

describe("Cloudflare's SQL limits, held in development mode", () => {
  it("D1: 100 bound parameters run, alone and in a batch; 101 are refused before they run", async () => {
    const checked = withProductionLimits(env);
    expect(checked).toBe(withProductionLimits(env));
    expect(Object.values((await checked.DB.prepare(selectOf(100)).bind(...numbers(100)).first<Record<string, number>>())!)).toHaveLength(100);
    const [one, two] = await checked.DB.batch([checked.DB.prepare("SELECT 1 AS n"), checked.DB.prepare("SELECT ?1 AS n").bind(2)]);
    expect([one.results, two.results]).toEqual([[{ n: 1 }], [{ n: 2 }]]);
    expect(() => checked.DB.prepare(selectOf(101)).bind(...numbers(101))).toThrow(/binds 101 parameters; Cloudflare takes at most 100/);
  });

  it("D1: a statement text over 100,000 bytes and a value over 2,000,000 bytes are refused before they run", async () => {
    const checked = withProductionLimits(env);
    const padded = (bytes: number) => `SELECT 1 AS n /*${"x".repeat(bytes - 18)}*/`;
    expect(padded(100_000)).toHaveLength(100_000);
    expect(await checked.DB.prepare(padded(100_000)).first()).toEqual({ n: 1 });
    expect(() => checked.DB.prepare(padded(100_001))).toThrow(/100001 bytes long, over the 100000/);
    // Counted in UTF-8 bytes: 666,667 three-byte characters are 2,000,001 bytes.
    expect(() => checked.DB.prepare("SELECT length(?1)").bind("€".repeat(666_667))).toThrow(/value of 2000001 bytes \(parameter 1\)/);
    expect(() => checked.DB.prepare("SELECT length(?2)").bind(1, new Uint8Array(2_000_001))).toThrow(/value of 2000001 bytes \(parameter 2\)/);
    expect(await checked.DB.prepare("SELECT length(?1) AS n").bind("€".repeat(666_666)).first()).toEqual({ n: 666_666 });
  });

  it("production mode leaves the environment untouched", () => {
    const production = { ...env, RELAY_ENV: "production" } as Env;
    expect(withProductionLimits(production)).toBe(production);
  });

  it("an app store's SQLite refuses a statement over 100 parameters, over 100,000 bytes, or binding a value over 2,000,000 bytes", async () => {
    const store = env.APP_STORE.get(env.APP_STORE.idFromName(`limits-${crypto.randomUUID()}`));
    await runInDurableObject(store, (_instance, state) => {
      expect(state.storage.sql.exec(selectOf(100), ...numbers(100)).toArray()).toHaveLength(1);
      expect(() => state.storage.sql.exec(selectOf(101), ...numbers(101))).toThrow(/binds 101 parameters/);
      expect(() => state.storage.sql.exec(`SELECT 1 /*${"x".repeat(100_000)}*/`)).toThrow(/bytes long, over the 100000/);
      expect(() => state.storage.sql.exec("SELECT length(?)", "x".repeat(2_000_001))).toThrow(/value of 2000001 bytes/);
    });
  });
});
