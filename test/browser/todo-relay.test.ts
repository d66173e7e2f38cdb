// Issue 11's "done when", as a person and an agent would do it: an agent deploys a todo
// app whose manifest mails the owner about each new todo, posts each completed todo to a
// webhook through a static connection, and reminds the owner of due dates; the owner adds
// and completes todos in Chromium; the mails land in the development outbox, a receiver on
// 127.0.0.1 gets signed deliveries carrying the connection's header, the journal shows each
// attempt, a replay sends one again, and `POST /__dev/cron` as of tomorrow 09:00 in the
// app's time zone sends the reminder once (a second cron sends nothing more).
import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { api, ownerWithAgent, relayUrl, signInLink, useBrowser } from "./support";
import { waitFor, quietFor } from "../support/wait";

const { newPage } = useBrowser();

type Hit = { headers: IncomingHttpHeaders; body: string };
const hits: Hit[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    hits.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
    res.writeHead(200).end("ok");
  });
});
afterAll(() => new Promise<void>((resolve) => {
  receiver.closeAllConnections();
  receiver.close(() => resolve());
}));

const ZONE = "Europe/Berlin";

/** The calendar date `days` from now in the app's zone, and 09:00 of it there as an instant. */
function localDay(days: number): { date: string; nineAm: string } {
  const date = new Intl.DateTimeFormat("en-CA", { timeZone: ZONE, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(Date.now() + days * 86_400_000));
  // 09:00 in Berlin is 07:00 or 08:00 UTC; 08:00 UTC is 09:00 or 10:00 there: past 08:00 local either way.
  return { date, nineAm: `${date}T08:00:00Z` };
}

function manifest(hookUrl: string) {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: {
      Todo: {
        type: "object", additionalProperties: false, required: ["title"],
        properties: { title: { type: "string", maxLength: 200 }, due: { type: "string", maxLength: 10 }, done: { type: "boolean" } },
      },
    },
    "x-service-manifest": {
      app: { name: "Todos" },
      collections: { todos: { schema: { $ref: "#/$defs/Todo" }, read: ["owner"], write: ["owner"], update: ["owner"], delete: ["owner"] } },
      notify: [{ on: "create", collection: "todos", to: ["owner"], subject: "New todo: {{title}}", body: "{{title}} is due {{due}}." }],
      webhooks: [{ on: "update", collection: "todos", when: { field: "done", changedTo: true }, url: hookUrl, connection: "hooks" }],
      schedules: [{ collection: "todos", dateField: "due", offsetDays: 0, to: ["owner"], subject: "Due today: {{title}}", body: "{{title}} is due today." }],
    },
  };
}

const PAGE = `<!doctype html><html><head><title>Todos</title></head><body><ul id="todos"></ul></body></html>`;

async function mailTo(email: string): Promise<Array<{ subject: string; text: string }>> {
  return (await api<{ messages: Array<{ subject: string; text: string }> }>(`/__dev/mail?to=${encodeURIComponent(email)}`)).body.messages;
}

describe("the todo app of issue 11, end to end", () => {
  it("mails, signed webhooks through a connection, a journal with replay, and reminders by the day", async () => {
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/done`;
    const { email, key } = await ownerWithAgent("todos");
    const deployed = await api<{ app_id: string; url: string; webhook_secret: string }>("/v1/apps", { key, body: { html: PAGE, manifest: manifest(hookUrl), visibility: "private" } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
    const app = deployed.body;
    expect((await api(`/v1/apps/${app.app_id}`, { key, method: "PATCH", body: { timezone: ZONE } })).status).toBe(200);
    const connection = await api(`/v1/apps/${app.app_id}/connections`, {
      key, body: { name: "hooks", kind: "static", allowedHost: "127.0.0.1", headerName: "X-Api-Key", headerValue: "todo-receiver-key" },
    });
    expect(connection.status, JSON.stringify(connection.body)).toBe(201);

    // The owner, in the browser, adds two todos and completes one.
    const p = await newPage();
    await p.goto(app.url);
    await p.locator("#svc-sign-in").click();
    await p.waitForURL((url) => url.origin === relayUrl && url.pathname === "/signin");
    await p.getByLabel("Email address").fill(email);
    await p.getByRole("button", { name: "Email me a sign-in link" }).click();
    await p.locator("main h1", { hasText: "Check your mail" }).waitFor();
    await p.goto(await signInLink(email));
    await p.waitForFunction(() => (window as unknown as { service?: { session?: { kind?: string } } }).service?.session?.kind === "owner", undefined, { timeout: 15_000 });
    const tomorrow = localDay(1);
    const later = localDay(3);
    const first = await p.evaluate(async (due) => {
      const svc = (window as unknown as { service: { ready: Promise<void>; collections: { create(c: string, d: unknown): Promise<{ key: string; version: number }> } } }).service;
      await svc.ready;
      return svc.collections.create("todos", { title: "Buy milk", due });
    }, tomorrow.date);
    await p.evaluate(async (due) => {
      const svc = (window as unknown as { service: { collections: { create(c: string, d: unknown): Promise<unknown> } } }).service;
      return svc.collections.create("todos", { title: "File taxes", due });
    }, later.date);
    await p.evaluate(async ({ key, due }) => {
      const svc = (window as unknown as { service: { collections: { update(c: string, k: string, d: unknown): Promise<unknown> } } }).service;
      return svc.collections.update("todos", key, { title: "Buy milk", due, done: true });
    }, { key: first.key, due: tomorrow.date });

    // The owner is mailed about both new todos (one mail each, or one digest naming both).
    await waitFor(async () => {
      const text = (await mailTo(email)).filter((m) => !/sign-in/i.test(m.subject)).map((m) => `${m.subject}\n${m.text}`).join("\n");
      return text.includes("Buy milk") && text.includes("File taxes");
    }, { timeout: 30_000, interval: 250, message: "the owner's new-todo mails" });

    // The completed todo reaches the receiver: signed, with the connection's header.
    await waitFor(() => hits.length >= 1, { timeout: 30_000, interval: 100, message: "the signed delivery" });
    const [hit] = hits;
    expect(hit.headers["x-api-key"]).toBe("todo-receiver-key");
    const signature = String(hit.headers["x-service-signature"]);
    const t = /t=(\d+)/.exec(signature)![1];
    expect(signature).toContain(`v1=${createHmac("sha256", app.webhook_secret).update(`${t}.${hit.body}`).digest("hex")}`);
    expect(JSON.parse(hit.body)).toMatchObject({ app_id: app.app_id, collection: "todos", op: "update", row: { key: first.key, data: { done: true } } });

    // The journal shows the attempt; a replay sends it again.
    const journal = await waitFor(async () => {
      const list = (await api<{ deliveries: Array<{ id: string; status: string; attempts: number }> }>(`/v1/apps/${app.app_id}/webhooks/deliveries`, { key })).body.deliveries;
      return list[0]?.status === "delivered" ? list : null;
    }, { timeout: 15_000, message: "the delivery journaled" });
    expect(journal).toHaveLength(1);
    expect(journal[0].attempts).toBe(1);
    const replay = await api<{ delivery: { id: string } }>(`/v1/apps/${app.app_id}/webhooks/deliveries/${journal[0].id}/replay`, { key, method: "POST" });
    expect(replay.status).toBe(200);
    await waitFor(() => hits.length >= 2, { timeout: 30_000, interval: 100, message: "the replayed delivery" });
    expect(hits[1].headers["x-service-delivery"]).toBe(replay.body.delivery.id);

    // Tomorrow morning in Berlin the reminder goes out, once.
    const reminders = async () => (await mailTo(email)).filter((m) => m.subject.startsWith("Due today") || m.text.includes("is due today"));
    expect(await reminders()).toEqual([]);
    expect((await api(`/__dev/cron`, { method: "POST", body: { now: tomorrow.nineAm } })).status).toBe(200);
    await waitFor(async () => (await reminders()).length > 0, { timeout: 15_000, message: "the reminder" });
    expect((await api(`/__dev/cron`, { method: "POST", body: { now: tomorrow.nineAm } })).status).toBe(200);
    await quietFor(1_000);
    const sent = await reminders();
    expect(sent).toHaveLength(1);
    expect(`${sent[0].subject}\n${sent[0].text}`).toContain("Buy milk");
    expect(`${sent[0].subject}\n${sent[0].text}`).not.toContain("File taxes");
  }, 180_000);
});
