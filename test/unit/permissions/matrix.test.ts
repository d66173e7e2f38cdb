// The exhaustive matrix: every subject × every verb × every principal kind × every row
// placement, generated from the tables in oracle.ts and compared cell by cell with the
// engine. One test per subject and verb; a failure lists every cell that disagrees.
import { describe, expect, it } from "vitest";
import { PRINCIPAL_NAMES, VARIANTS } from "./fixtures";
import { expected, scenario, SUBJECTS, type Verb } from "./oracle";
import { refusedByManifest, run } from "./runner";

const VERBS: Verb[] = ["list", "get", "count", "create", "update", "updateHidden", "delete", "deleteHidden", "purge", "restore", "listDeleted"];

describe("permission matrix", () => {
  for (const subject of Object.keys(SUBJECTS)) {
    describe(`subject ${subject}`, () => {
      for (const verb of VERBS) {
        if (!scenario(verb, subject)) {
          it(`${verb}: the manifest refuses "${subject}" in that list`, () => {
            expect(refusedByManifest(verb, subject)).toBe("permission_role_invalid");
          });
          continue;
        }
        it(`${verb} × every principal × every row placement`, () => {
          const wrong: string[] = [];
          let cells = 0;
          for (const name of PRINCIPAL_NAMES) {
            for (const v of VARIANTS) {
              cells++;
              const want = expected(verb, subject, name, v);
              const got = run(verb, subject, name, v);
              if (want !== got) wrong.push(`${name} on a ${v} row: expected ${want}, got ${got}`);
            }
          }
          expect(cells).toBe(PRINCIPAL_NAMES.length * VARIANTS.length);
          expect(wrong).toEqual([]);
        });
      }
    });
  }
});
