// A large, realistic manifest that uses nearly every key of the grammar compiles, survives
// a JSON round trip, and renders a disclosure a human can read.
import { describe, expect, it } from "vitest";
import { compatGate, disclosure, parseManifest } from "../../../src/manifest";

const SHOP = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: {
    Product: {
      type: "object",
      required: ["name", "slug", "price"],
      additionalProperties: false,
      properties: {
        name: { type: "string", minLength: 1, maxLength: 120 },
        slug: { type: "string", pattern: "^[a-z0-9-]+$", maxLength: 80 },
        price: { type: "number", minimum: 0 },
        description: { type: "string", maxLength: 4000 },
        photo: { type: "string", format: "service-attachment-id" },
        tags: { type: "array", items: { type: "string", maxLength: 30 }, maxItems: 10, uniqueItems: true },
      },
    },
    Order: {
      type: "object",
      required: ["product", "qty", "email"],
      properties: {
        product: { type: "string" },
        qty: { type: "integer", minimum: 1, maximum: 99 },
        unit_price: { type: "number" },
        total: { type: "number" },
        email: { type: "string", format: "email", maxLength: 254 },
        status: { type: "string", enum: ["new", "paid", "shipped", "cancelled"] },
        assignee: { type: "string" },
        ship_by: { type: "string", format: "date" },
      },
    },
    Review: {
      type: "object",
      required: ["product", "stars"],
      properties: { product: { type: "string" }, stars: { type: "integer", minimum: 1, maximum: 5 }, text: { type: "string", maxLength: 2000 } },
    },
    Settings: { type: "object", properties: { fulfilment_url: { type: "string", format: "uri" }, currency: { type: "string" } } },
    Event: { type: "object", properties: { kind: { type: "string" }, ref: { type: "string" }, payload: {} } },
    Summary: { type: "object", properties: { order: { type: "string" }, text: { type: "string" } } },
  },
  "x-service-manifest": {
    app: { name: "Corner Shop", description: "Products, orders and reviews for a small shop.", icon: "🛒", indexable: true, ogImage: "https://cdn.example.com/shop.png" },
    roles: {
      clerk: { label: "Clerk", description: "Handles orders" },
      manager: { label: "Manager", includes: ["clerk"] },
    },
    collections: {
      products: {
        schema: { $ref: "#/$defs/Product" },
        read: ["anyone"], write: ["owner", "manager"], update: ["owner", "manager"], delete: ["owner"],
        unique: ["slug"], immutable: ["slug"], seedOnInstall: true, mirror: "eager",
      },
      orders: {
        schema: { $ref: "#/$defs/Order" },
        read: ["owner", "clerk", "creator", "assignee"], write: ["anyone"], update: ["owner", "clerk", "assignee"], delete: ["owner"],
        countRead: ["owner", "clerk"],
        relations: { assignee: { field: "assignee", set: "writer" } },
        keyClaim: "server",
        serverSet: { unit_price: { from: "products", keyField: "product", take: "price" }, total: { product: ["unit_price", "qty"] } },
        anonWriteBudget: { perIpPerDay: 5, perAppPerDay: 500 },
        antiAbuse: "challenge",
        retention: { maxAgeDays: 365 },
      },
      reviews: {
        schema: { $ref: "#/$defs/Review" },
        read: ["anyone"], write: ["anyone"], appendOnly: { except: ["owner"] }, delete: ["owner"],
        countRead: ["anyone"], anonWriteBudget: { perIpPerDay: 3, perAppPerDay: 0 },
      },
      settings: { schema: { $ref: "#/$defs/Settings" }, read: ["owner"], write: ["owner"], delete: ["owner"] },
      events: { schema: { $ref: "#/$defs/Event" }, read: ["owner"], write: ["owner"], delete: ["owner"], unique: ["ref"], storage: "document", retention: { maxRows: 1000 } },
      summaries: { schema: { $ref: "#/$defs/Summary" }, read: ["owner", "manager"], write: ["owner"], delete: ["owner"] },
      scratch: { read: ["member:own"], write: ["member"], delete: ["member:creator"], mirror: "server" },
    },
    settingsCollection: "settings",
    notify: [
      { on: "create", collection: "orders", to: ["owner", "role:clerk"], subject: "New order: {{qty}} × {{product}}", body: "Order from {{email}}.", link: "/orders" },
      { on: "update", collection: "orders", to: ["field:assignee"], when: { field: "status", changedTo: "paid" }, subject: "Order paid", body: "Ship it by {{ship_by}}." },
      { on: "create", collection: "reviews", to: ["owner"], when: { field: "stars", lte: 2 }, subject: "A low review", body: "{{text}}", excludeActor: true },
    ],
    schedules: [
      { collection: "orders", dateField: "ship_by", offsetDays: -1, when: { field: "status", equals: "paid" }, to: ["owner", "members"], subject: "Ship tomorrow: {{product}}", body: "{{qty}} for {{email}}" },
      { collection: "orders", dateField: "ship_by", offsetDays: 0, urlFromSetting: "fulfilment_url", bodyTemplate: "{\"order\": {{product}}, \"qty\": {{qty}}}" },
    ],
    webhooks: [
      { on: "create", collection: "orders", url: "https://hooks.example.com/orders?src=shop", connection: "crm", bodyTemplate: "{\"email\": {{email}}, \"total\": {{total}}}" },
      { on: "update", collection: "orders", when: { field: "status", changedTo: "shipped" }, urlFromSetting: "fulfilment_url" },
      { on: "create", collection: "events", url: "https://audit.example.org/in", machineAuthorKinds: ["hook"] },
    ],
    agentTasks: [
      { on: "create", collection: "orders", when: { authorKindIn: ["human", "visitor", "anon"] }, taskType: "summarize-order", prompt: "Write a one-line summary of the order in the context and store it in summaries.", reads: ["products"], writes: ["summaries"], ttlSeconds: 86400, leaseSeconds: 600 },
    ],
    ingest: [
      { name: "stripe", collection: "events", mode: "upsert", upsertOn: "ref", map: { kind: "type", ref: "data.object.id", payload: "data.object" }, dedupeKey: "id", handshake: "echo", wake: true },
      { name: "github", collection: "events", dedupeKey: "header:x-github-delivery", verify: { scheme: "github" } },
    ],
    externalHosts: ["https://api.stripe.com", "https://*.tiles.example.org"],
    embeds: ["https://www.youtube.com"],
    embedAncestors: ["https://blog.example.com"],
    capabilities: ["camera", "clipboard-write", "web-share"],
    routes: [
      { path: "/p/:slug", collection: "products", matchOn: "slug", title: "{name} – {app.name}", description: "{description}", summary: ["name", "price"], schemaType: "Product", indexable: true },
      { path: "/r/:id", collection: "reviews", matchOn: "key", title: "Review of {product}" },
    ],
  },
};

describe("a realistic manifest", () => {
  const compiled = parseManifest(SHOP, { NOTIFY_EXTERNAL_ENABLED: true }, { timezone: "Europe/Berlin", visibility: "public", appOrigin: "https://corner-shop.apps.example" });

  it("compiles with every section normalised", () => {
    expect(Object.keys(compiled.collections)).toEqual(["products", "orders", "reviews", "settings", "events", "summaries", "scratch"]);
    expect(compiled.roles.manager.expands).toEqual(["clerk", "manager"]);
    expect(compiled.collections.orders).toMatchObject({
      keyClaim: "server", antiAbuse: "turnstile", immutable: ["product"],
      relations: { assignee: { field: "assignee", set: "writer" } },
      retention: { maxRows: null, maxAgeDays: 365 },
    });
    expect(compiled.collections.orders.permissions.read.map((s) => s.scope)).toEqual(["all", "all", "creator", "relation"]);
    expect(compiled.collections.reviews).toMatchObject({ appendOnly: true, appendOnlyExcept: ["owner"] });
    expect(compiled.collections.events.maxRowBytes).toBe(262144);
    expect(compiled.notify).toHaveLength(3);
    expect(compiled.schedules[1].action).toMatchObject({ kind: "webhook", urlFromSetting: "fulfilment_url" });
    expect(compiled.agentTasks[0].reads).toEqual(["products", "summaries"]);
    expect(compiled.ingest.map((h) => h.name)).toEqual(["stripe", "github"]);
    expect(compiled.routes.map((r) => r.shape)).toEqual(["/p/:", "/r/:"]);
    expect(compiled.visitorIdentity).toBe(true);
    expect(compiled.warnings).toEqual([]);
    expect(new Set([...compiled.notify, ...compiled.webhooks, ...compiled.schedules, ...compiled.agentTasks].map((r) => r.id)).size).toBe(9);
  });

  it("survives a JSON round trip and keeps its source", () => {
    expect(JSON.parse(JSON.stringify(compiled))).toEqual(compiled);
    expect(compiled.source).toEqual(SHOP);
  });

  it("recompiling the same JSON gives the same result and no breaks", () => {
    const again = parseManifest(JSON.stringify(SHOP), { NOTIFY_EXTERNAL_ENABLED: true }, { timezone: "Europe/Berlin", visibility: "public", appOrigin: "https://corner-shop.apps.example" });
    expect(again).toEqual(compiled);
    expect(compatGate(compiled, again)).toEqual({ breaks: [] });
  });

  it("renders a disclosure", () => {
    const d = disclosure(compiled);
    expect(d.external_hosts).toEqual(["https://api.stripe.com", "https://*.tiles.example.org"]);
    expect(d.embeds).toEqual(["https://www.youtube.com"]);
    expect(d.capabilities).toEqual(["camera", "clipboard-write", "web-share"]);
    expect(d.cdn).toBe(false);
    expect(d.webhook_targets).toEqual(["https://audit.example.org", "https://hooks.example.com", "setting:fulfilment_url"]);
    expect(d.webhook_rules).toContainEqual({ collection: "orders", on: "schedule", target: "setting:fulfilment_url" });
    expect(d.is_empty).toBe(false);
    expect(d.collections.find((c) => c.name === "reviews")).toMatchObject({ update: ["owner"], delete: ["owner"], append_only: true, count_read: ["anyone"] });
    expect(d.lines).toContain("The page may connect to https://api.stripe.com.");
    expect(d.lines).toContain("https://blog.example.com may show this app inside its own pages.");
    expect(d.lines).toContain('When a row of "orders" is created, it is sent to https://hooks.example.com.');
    expect(d.lines).toContain('Public page /p/:slug shows a row of "products" and is listed for search engines.');
    expect(d.lines.some((l) => l.startsWith('Collection "orders": read by owner, clerk, creator, assignee; created by anyone'))).toBe(true);
    expect(d.lines.some((l) => l.startsWith('Queues agent task "summarize-order"'))).toBe(true);
  });
});

describe("disclosure of a minimal manifest", () => {
  it("is empty", () => {
    const d = disclosure(parseManifest({ "x-service-manifest": { app: { name: "Plain" } } }));
    expect(d).toMatchObject({ lines: [], external_hosts: [], embeds: [], capabilities: [], cdn: false, offline: false, webhook_targets: [], is_empty: true });
  });

  it("names cdn, offline and schedules", () => {
    const d = disclosure(parseManifest({
      "x-service-manifest": {
        app: { name: "P" }, offline: true,
        collections: { tasks: { read: ["owner"], write: ["owner"], delete: ["owner"] } },
        schedules: [{ collection: "tasks", dateField: "due", offsetDays: 2, to: ["owner"], subject: "s", body: "b" }],
      },
    }));
    expect(d.lines).toContain("The app installs a service worker so it works offline.");
    expect(d.lines).toContain('Emails owner about each row of "tasks" 2 day(s) after its due date.');
    expect(d.is_empty).toBe(false);
  });
});
