// Development mode holds D1 and the app store's SQLite to Cloudflare's limit of 100 bound
// parameters a statement (src/db/production-limits.ts), which the local runtime would let
// pass: a statement over it fails here, named, as it would in production; production mode
// leaves the bindings as they are.
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

  it("production mode leaves the environment untouched", () => {
    const production = { ...env, RELAY_ENV: "production" } as Env;
    expect(withProductionLimits(production)).toBe(production);
  });

  it("an app store's SQLite refuses a statement over 100 parameters", async () => {
    const store = env.APP_STORE.get(env.APP_STORE.idFromName(`limits-${crypto.randomUUID()}`));
    await runInDurableObject(store, (_instance, state) => {
      expect(state.storage.sql.exec(selectOf(100), ...numbers(100)).toArray()).toHaveLength(1);
      expect(() => state.storage.sql.exec(selectOf(101), ...numbers(101))).toThrow(/binds 101 parameters/);
    });
  });
});
