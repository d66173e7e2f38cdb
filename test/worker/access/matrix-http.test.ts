// The permission matrix of the data plane, repeated through real HTTP (issue 5): every
// subject × verb × principal × row placement of test/unit/permissions, for the principals
// that reach the data plane over the wire — members (no role, staff, lead) and grant-link
// holders (staff, lead, key pin in/out, where pin in/out) on the app origin's `/_svc/*`
// paths with their app-session / `grh_` bearers, and service credentials (all ops, read
// only, no ops, another collection, scope own, following, following with a carve-out) on
// `/v1/apps/:id/collections`. Expectations come from the same oracle as the unit matrix.
// Each subject gets its own app (matrix-http-support.ts places the rows for real); a
// failure lists every cell that disagrees.
import { beforeAll, describe, expect, it } from "vitest";
import { claimedAgent, signIn } from "../helpers";
import { VARIANTS, type PrincipalName, type Variant } from "../../unit/permissions/fixtures";
import { expected, scenario, SUBJECTS, type Verb } from "../../unit/permissions/oracle";
import {
  api, asAgent, deployScenario, expectJson, HTTP_PRINCIPALS, kindOf, openApp, page, placeRows, pool, producible, reduce,
  refusedManifest, rowData, runCell, type Cast, type Kind,
} from "./matrix-http-support";

const VERBS: Verb[] = ["list", "get", "count", "create", "update", "updateHidden", "delete", "deleteHidden", "purge", "restore", "listDeleted"];
/** Verbs that address or show the placed row; count, create and listDeleted involve no existing row. */
const ROW_VERBS: Verb[] = ["list", "get", "update", "updateHidden", "delete", "deleteHidden", "purge", "restore"];
/**
 * Purge, restore and the deleted list exist only on `/v1`, which members and holders
 * cannot call (their bearers are app-origin credentials); the app origin has no such
 * routes (see the last test). Their cells are skipped for those principals.
 */
const TRASH: Verb[] = ["purge", "restore", "listDeleted"];
const WIDTH = 8;

interface Cell {
  verb: Verb;
  name: PrincipalName;
  v: Variant;
}

/** The cells one subject's test runs, and how many it skips and why. */
function plan(subject: string): { cells: Cell[]; noRoute: number; noPlacement: number } {
  const out = { cells: [] as Cell[], noRoute: 0, noPlacement: 0 };
  for (const verb of VERBS) {
    if (!scenario(verb, subject)) continue;
    for (const name of HTTP_PRINCIPALS) {
      for (const v of VARIANTS) {
        if (kindOf(name) !== "credential" && TRASH.includes(verb)) out.noRoute++;
        else if (ROW_VERBS.includes(verb) && !producible(name, v)) out.noPlacement++;
        else out.cells.push({ verb, name, v });
      }
    }
  }
  return out;
}

const cast = {} as Cast;

beforeAll(async () => {
  const owner = await signIn();
  cast.owner = owner;
  cast.agent = await claimedAgent(owner);
  const [member, memberStaff, memberLead] = await Promise.all([signIn(), signIn(), signIn()]);
  cast.humans = { member, memberStaff, memberLead };
}, 60_000);

describe("the permission matrix over HTTP", () => {
  it("checks the expected number of cells per principal kind and skips only unreachable ones", () => {
    const checked: Record<Kind, number> = { member: 0, grant: 0, credential: 0 };
    let noRoute = 0;
    let noPlacement = 0;
    for (const subject of Object.keys(SUBJECTS)) {
      const p = plan(subject);
      for (const c of p.cells) checked[kindOf(c.name)]++;
      noRoute += p.noRoute;
      noPlacement += p.noPlacement;
    }
    // 140 (verb, subject) pairs the manifest accepts: 112 involve the placed row, 28 (count,
    // create, listDeleted) do not. Members: 98 pairs without the 42 trash ones, × 5
    // placements × 3. Holders: the same 98 pairs; key pin out has 2 placements for the 84
    // row pairs, where pin out 3, the other four all 5. Credentials: all 140 pairs; read
    // only, no ops, another collection and the carve-out have 2 placements for the 112 row
    // pairs, scope own 4, all ops and following 5.
    expect(checked).toEqual({
      member: 98 * 5 * 3,
      grant: 4 * 98 * 5 + (84 * 2 + 14 * 5) + (84 * 3 + 14 * 5),
      credential: 2 * 140 * 5 + (112 * 4 + 28 * 5) + 4 * (112 * 2 + 28 * 5),
    });
    expect(noRoute).toBe(42 * 9 * 5);
    expect(noPlacement).toBe(84 * 3 + 84 * 2 + 112 * 1 + 4 * 112 * 3);
    expect(checked.member + checked.grant + checked.credential + noRoute + noPlacement).toBe(140 * HTTP_PRINCIPALS.length * VARIANTS.length);
  });

  for (const subject of Object.keys(SUBJECTS)) {
    it(`subject ${subject}: every verb × principal × row placement`, async () => {
      const wrong: string[] = [];
      // A scenario the manifest refuses: the relay's deploy refuses it too, as the unit matrix says.
      for (const verb of VERBS) {
        if (scenario(verb, subject)) continue;
        const res = await api("/v1/apps", { key: cast.agent.api_key, json: { html: "<p>x</p>", manifest: refusedManifest(verb, subject), dry_run: true } });
        const { got } = await reduce(res, 200);
        if (got !== "permission_role_invalid") wrong.push(`${verb}: deploying "${subject}" in that list: expected permission_role_invalid, got ${got}`);
      }
      const app = await openApp(cast, subject);
      await placeRows(app, WIDTH);
      await deployScenario(app);
      const { cells } = plan(subject);
      let checked = 0;
      await pool(cells, WIDTH, async ({ verb, name, v }) => {
        const want = expected(verb, subject, name, v);
        const got = await runCell(app, verb, name, v);
        checked++;
        if (got !== want) wrong.push(`${verb}: ${name} on a ${v} row: expected ${want}, got ${got}`);
      });
      expect(checked).toBe(cells.length);
      expect(wrong.sort()).toEqual([]);
    }, 120_000);
  }
});

describe("the trash verbs for members and holders", () => {
  it("have no route on the app origin, and their bearers open no /v1 route; the rows stay as they were", async () => {
    const app = await openApp(cast, "owner");
    for (const key of ["live", "gone"]) await expectJson(asAgent(app, "reads", "", { json: { key, data: rowData("x") } }), 201, "row");
    await expectJson(asAgent(app, "reads", "/gone", { method: "DELETE" }), 200, "delete");
    const answers: string[] = [];
    const want: string[] = [];
    for (const name of ["memberLead", "grantLead"] as const) {
      const { token } = app.actors[name].mine;
      const tries: Array<[string, string, string, string]> = [
        ["page", "DELETE", "/_svc/c/reads/live/purge", "not_found"],
        ["page", "POST", "/_svc/c/reads/gone/restore", "not_found"],
        ["page", "GET", "/_svc/deleted/reads", "not_found"],
        ["api", "DELETE", "/reads/live/purge", "unauthorized"],
        ["api", "POST", "/reads/gone/restore", "unauthorized"],
        ["api", "GET", "/reads/deleted", "unauthorized"],
      ];
      for (const [door, method, path, code] of tries) {
        const res = door === "page"
          ? await page(app.slug, path, { method, token })
          : await api(`/v1/apps/${app.appId}/collections${path}`, { method, key: token });
        answers.push(`${name} ${method} ${path}: ${(await reduce(res, 200)).got}`);
        want.push(`${name} ${method} ${path}: ${code}`);
      }
    }
    expect(answers).toEqual(want);
    await expectJson(asAgent(app, "reads", "/live"), 200, "live row");
    const trash = await expectJson<{ rows: Array<{ key: string }> }>(asAgent(app, "reads", "/deleted"), 200, "deleted list");
    expect(trash.rows.map((r) => r.key)).toEqual(["gone"]);
  }, 60_000);
});
