// A grant-link holder on the app origin: the `grh_` bearer (from POST /_svc/grant) opens
// the document of private and link apps, `GET /_svc/session` answers it as anonymous with
// `grant: { role, holderId }`, the feed socket takes it as `service.grant.<token>`, and
// once the link is revoked the same credential gets 401 (`grant_invalid` on the session).
// A holder's pin hides the same rows from the list (SQL) as from a get (the in-memory
// filter), whatever JSON type a field holds, and the largest list the limits allow — 8
// relations, a 20-condition pin, a 20-condition where, 4 sort fields and a cursor — answers.
import { describe, expect, it, vi } from "vitest";
import { expectError, json } from "../helpers";
import { appCall } from "./helpers";
import { manifestOf, setup, type App, type Obj } from "../access/fixtures";
import { Socket } from "../live/helpers";

vi.setConfig({ testTimeout: 60_000 });

async function holder(visibility: string, manifest?: Obj, pin?: Obj) {
  const app = await setup(manifest, visibility);
  return { app, ...(await claim(app, pin)) };
}

/** Mints a guest grant link (pinned when `pin` is given) and claims it: the holder's bearer and id. */
async function claim(app: App, pin?: Obj) {
  const link = await app.mintGrant({ role: "guest", ...(pin ? { pin } : {}) });
  const grant = /#g=(gr_[0-9a-f]{32})$/.exec(link.grant_url)![1];
  const { token, holder_id } = await json<{ token: string; holder_id: string }>(await appCall(app.slug, "/_svc/grant", { json: { grant } }), 200);
  return { link, token, holderId: holder_id };
}

interface Page {
  rows: Array<{ key: string; data: Obj }>;
  next_cursor: string | null;
  has_more: boolean;
}

function listPath(collection: string, q?: unknown, since?: string | null, limit?: number): string {
  const params = new URLSearchParams();
  if (q !== undefined) params.set("q", JSON.stringify(q));
  if (since) params.set("since", since);
  if (limit !== undefined) params.set("limit", String(limit));
  return `/_svc/c/${collection}?${params}`;
}

/** The keys a holder lists (every page) and the keys a get of each of `keys` answers 200 for. */
async function listedAndGot(slug: string, token: string, collection: string, keys: string[]): Promise<{ listed: string[]; got: string[] }> {
  const listed = (await json<Page>(await appCall(slug, listPath(collection, undefined, null, 1000), { token }), 200)).rows.map((r) => r.key);
  const got: string[] = [];
  for (const key of keys) {
    const res = await appCall(slug, `/_svc/c/${collection}/${key}`, { token });
    if (res.status === 200) got.push(key);
    else await expectError(res, 404, "row_not_found");
  }
  return { listed, got };
}

/** One row per JSON type a field can hold (and none at all). */
const TEAMS: Array<[string, unknown]> = [
  ["blue", "blue"], ["red", "red"], ["empty", ""], ["five", 5], ["half", 2.5], ["zero", 0], ["big", 2 ** 60], ["yes", true], ["no", false],
  ["nul", null], ["arr", ["red"]], ["arr5", [5]], ["obj", { red: 1 }], ["missing", undefined],
];

const BOARD = manifestOf({
  board: { read: ["owner", "guest"], write: ["owner"], delete: ["owner"] },
});

describe("a grant holder on the app origin", () => {
  for (const visibility of ["private", "link"]) {
    it(`opens the ${visibility} app's document and is an anonymous session carrying the role`, async () => {
      const { app, token, holderId } = await holder(visibility);
      const doc = await appCall(app.slug, "/", { token });
      expect(doc.status).toBe(200);
      expect(await doc.text()).toContain("<p>access</p>");
      const session = await json<Record<string, unknown>>(await appCall(app.slug, "/_svc/session", { token }), 200);
      expect(session).toMatchObject({ kind: "anonymous", humanId: null, visitorId: null, grant: { role: "guest", holderId } });
    });
  }

  it("opens the feed socket as service.grant.<token>", async () => {
    const { app, token } = await holder("private");
    const socket = await Socket.connect(app.slug, ["service.v1", `service.grant.${token}`]);
    const hello = await socket.next();
    expect(hello).toMatchObject({ type: "hello", session: { kind: "anonymous", humanId: null } });
    socket.close();
  });

  it("is refused once the link is revoked", async () => {
    const { app, link, token } = await holder("private");
    expect((await app.call(`${app.grants}/${link.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await appCall(app.slug, "/", { token })).status).toBe(401);
    await expectError(await appCall(app.slug, "/_svc/session", { token }), 401, "grant_invalid");
  });

  it("others' session answers carry no grant field", async () => {
    const { app } = await holder("public");
    const anonymous = await json<Record<string, unknown>>(await appCall(app.slug, "/_svc/session", {}), 200);
    expect(anonymous.kind).toBe("anonymous");
    expect(anonymous).not.toHaveProperty("grant");
  });
});

describe("a grant holder's pin on list and get", () => {
  it("team neq \"red\" lists only rows whose team is another string — never 5, [\"red\"], null or missing — as get answers", async () => {
    const { app, token } = await holder("private", BOARD, { where: [{ field: "team", op: "neq", value: "red" }] });
    for (const [key, team] of TEAMS) await app.create("board", team === undefined ? {} : { team }, key);
    const { listed, got } = await listedAndGot(app.slug, token, "board", TEAMS.map(([key]) => key));
    expect(listed).toEqual(["blue", "empty"]);
    expect(got).toEqual(listed);
    // The agent (owner) still lists every row.
    expect((await json<Page>(await app.call(app.rows("board")), 200)).rows).toHaveLength(TEAMS.length);
  });

  it("every operator with values of every type: the list and the get agree on which rows a pin leaves", async () => {
    const app = await setup(BOARD, "private");
    for (const [key, team] of TEAMS) await app.create("board", team === undefined ? {} : { team }, key);
    const pins: Obj[] = [];
    for (const value of ["red", "", 5, 0, 2.5, 2 ** 60, true, false]) {
      for (const op of ["eq", "neq", "gt", "lte"]) if (typeof value !== "boolean" || op === "eq" || op === "neq") pins.push({ field: "team", op, value });
    }
    pins.push(
      { field: "team", op: "in", value: ["red", 5, true] }, { field: "team", op: "notIn", value: ["red"] }, { field: "team", op: "notIn", value: [5, 0] },
      { field: "team", op: "notIn", value: [true] }, { field: "team", op: "notIn", value: ["red", 5] }, { field: "team", op: "gte", value: "a" },
      { field: "nope", op: "neq", value: "x" },
    );
    const keys = TEAMS.map(([key]) => key);
    const disagreements: string[] = [];
    for (const cond of pins) {
      const { token } = await claim(app, { where: [cond] });
      const { listed, got } = await listedAndGot(app.slug, token, "board", keys);
      if (JSON.stringify(listed) !== JSON.stringify(got)) disagreements.push(`${JSON.stringify(cond)}: list ${listed.join(",")} | get ${got.join(",")}`);
    }
    expect(disagreements).toEqual([]);
  });

  it("the largest list the limits allow answers: 8 relations, a 20-condition pin, a 20-condition where, 4 sort fields and a cursor", async () => {
    const relations = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`r${i}`, { field: `rel${i}`, set: "writer" }]));
    const manifest = manifestOf({
      board: {
        relations, write: ["owner"], delete: ["owner"],
        read: ["owner", "guest:creator", "guest:own", ...Object.keys(relations).map((r) => `guest:${r}`)],
      },
    });
    const app = await setup(manifest, "private");
    const pin = Array.from({ length: 20 }, (_, i) => ({ field: `p${i}`, op: "neq", value: `not-${i}-${"x".repeat(40)}` }));
    const { token, holderId } = await claim(app, { where: pin });
    const where = Array.from({ length: 20 }, (_, i) => ({ field: `w${i}`, op: i % 2 ? "gte" : "lte", value: i % 2 ? -1000 - i : 1000 + i }));
    const sort = [{ field: "s0" }, { field: "s1", dir: "desc" }, { field: "s2" }, { field: "s3", dir: "desc" }];
    const keys: string[] = [];
    for (let n = 0; n < 12; n++) {
      const data: Obj = { [`rel${n % 8}`]: holderId, s0: n % 2, s1: `v${n % 3}`, s2: n % 5, s3: n };
      for (let i = 0; i < 20; i++) {
        data[`p${i}`] = `ok-${i}`;
        data[`w${i}`] = i * n;
      }
      keys.push((await app.create("board", data, `row-${String(n).padStart(2, "0")}`)).key);
    }
    await app.create("board", { rel0: "someone-else", s3: 99 }, "not-theirs");
    const q = { where, sort };
    const paged: string[] = [];
    let since: string | null = null;
    for (let guard = 0; guard < 20; guard++) {
      const page: Page = await json<Page>(await appCall(app.slug, listPath("board", q, since, 5), { token }), 200);
      paged.push(...page.rows.map((r) => r.key));
      if (!page.has_more) break;
      since = page.next_cursor;
    }
    const whole = (await json<Page>(await appCall(app.slug, listPath("board", q, null, 1000), { token }), 200)).rows.map((r) => r.key);
    expect(whole.slice().sort()).toEqual(keys);
    expect(paged).toEqual(whole);
  });
});
