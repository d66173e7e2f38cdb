// `service types <app> [--out file]` as a real process against the test relay: the live
// version's declarations on stdout or in a file, and a catalogue error for an unknown app.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appPackage, claimedCliAgent, cleanupTempHomes, failed, ok, tempDir, type CliAgent } from "../helpers.ts";
import { TYPES_MANIFEST } from "../../unit/types-gen/fixture";

afterAll(() => {
  cleanupTempHomes();
});

describe("service types", () => {
  let me: CliAgent;
  let appId = "";

  beforeAll(async () => {
    me = await claimedCliAgent("cli-types-test");
    appId = ok(await me.cli(["deploy", appPackage(TYPES_MANIFEST, "typed")])).json<{ app_id: string }>().app_id;
  });

  it("prints the declarations, or writes them to --out", async () => {
    const printed = ok(await me.cli(["types", appId])).stdout;
    expect(printed).toContain("export type Todos = {");
    expect(printed).toContain('  "todo-items": TodoItems2;');

    const out = path.join(tempDir(), "service-types.d.ts");
    const written = ok(await me.cli(["types", appId, "--out", out])).json<{ app_id: string; written: string; bytes: number }>();
    expect(written).toEqual({ app_id: appId, written: out, bytes: Buffer.byteLength(printed) });
    expect(readFileSync(out, "utf8")).toBe(printed);
  });

  it("refuses an app that is not yours", async () => {
    failed(await me.cli(["types", "app_doesnotexist"]), "app_not_found");
  });
});
