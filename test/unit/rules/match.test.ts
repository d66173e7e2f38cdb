// Rule matching: which notify, webhook and agent-task rules one row change triggers.
import { describe, expect, it } from "vitest";
import { parseManifest } from "../../../src/manifest";
import { matchRules, type Change } from "../../../src/rules/match";

const manifest = parseManifest({
  $defs: { Order: { type: "object", properties: { status: { type: "string" }, total: { type: "number" } } } },
  "x-service-manifest": {
    app: { name: "Shop" },
    collections: { orders: { schema: { $ref: "#/$defs/Order" }, read: ["owner"], write: ["owner", "member"], delete: ["owner"] } },
    notify: [{ on: "create", collection: "orders", to: ["owner"], subject: "New order", body: "An order came in." }],
    webhooks: [
      { on: "update", collection: "orders", when: { field: "status", changedTo: "paid" }, url: "https://hooks.example.com/paid" },
      { on: "create", collection: "orders", when: { field: "total", gte: 100 }, url: "https://hooks.example.com/big" },
    ],
    agentTasks: [{ on: "create", collection: "orders", when: { authorKindIn: ["human"] }, taskType: "review", prompt: "Review this order." }],
  },
}, { development: true });

const change = (c: Partial<Change>): Change => ({ op: "create", collection: "orders", before: null, after: {}, authorKind: "human", ...c });
const kinds = (c: Change) => matchRules(manifest, c).map((m) => m.kind).sort();

describe("matchRules", () => {
  it("fires create rules whose level conditions hold, and not the others", () => {
    expect(kinds(change({ after: { total: 150 } }))).toEqual(["agentTasks", "notify", "webhooks"]);
    expect(kinds(change({ after: { total: 50 } }))).toEqual(["agentTasks", "notify"]);
    expect(kinds(change({ after: { total: "150" } }))).toEqual(["agentTasks", "notify"]);
  });

  it("fires an edge condition only when the value changes to it", () => {
    expect(kinds(change({ op: "update", before: { status: "open" }, after: { status: "paid" } }))).toEqual(["webhooks"]);
    expect(kinds(change({ op: "update", before: { status: "paid" }, after: { status: "paid" } }))).toEqual([]);
  });

  it("keeps machine writes away from webhooks and tasks unless a rule opts in", () => {
    expect(kinds(change({ authorKind: "hook", after: { total: 500 } }))).toEqual(["notify"]);
    expect(kinds(change({ authorKind: "agent", after: { total: 500 } }))).toEqual(["notify", "webhooks"]);
  });

  it("ignores other collections", () => {
    expect(matchRules(manifest, change({ collection: "other", after: { total: 500 } }))).toEqual([]);
  });
});
