/**
 * A webhook receiver on 127.0.0.1 for the worker tests (a workerd test cannot listen, but
 * it can reach loopback): a vitest global setup starts it and hands its origin to the
 * tests (`inject("webhookReceiver")`). Each test uses an inbox name of its own:
 * - `POST /hook/<inbox>` records the request (method, headers, raw body) and answers with
 *   the inbox's current behaviour: 200 by default, or what `POST /control/<inbox>` set —
 *   `{ "status": 503, "times": 2, "retryAfter": "1", "location": "…" }` answers that
 *   status for the next `times` requests (all of them without `times`), then 200 again;
 * - `GET /log/<inbox>` answers the recorded requests as JSON, oldest first.
 * It only ever listens on loopback and stops with the run.
 */
import { readBody, serveOnLoopback, type StandInServer } from "./http-parts";
import type { ReceivedRequest } from "./webhook-receiver-types";

interface Behaviour {
  status: number;
  times: number | null;
  retryAfter?: string;
  location?: string;
}

export async function startWebhookReceiver(): Promise<StandInServer> {
  const inboxes = new Map<string, ReceivedRequest[]>();
  const behaviours = new Map<string, Behaviour>();
  return serveOnLoopback({}, async (request, response, url) => {
    const [, verb, inbox] = url.pathname.split("/");
    const body = await readBody(request);
    if (verb === "log" && inbox) {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(inboxes.get(inbox) ?? []));
      return;
    }
    if (verb === "control" && inbox && request.method === "POST") {
      const parsed = JSON.parse(body || "{}") as Partial<Behaviour>;
      behaviours.set(inbox, { status: parsed.status ?? 200, times: parsed.times ?? null, retryAfter: parsed.retryAfter, location: parsed.location });
      response.writeHead(204).end();
      return;
    }
    if (verb === "hook" && inbox) {
      const headers: Record<string, string> = Object.fromEntries(Object.entries(request.headers)
        .map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : String(value ?? "")]));
      const log = inboxes.get(inbox) ?? [];
      log.push({ method: request.method ?? "", path: url.pathname + url.search, headers, body, at: Date.now() });
      inboxes.set(inbox, log);
      const behaviour = behaviours.get(inbox);
      if (behaviour && behaviour.times !== null && behaviour.times <= 0) behaviours.delete(inbox);
      const active = behaviours.get(inbox);
      if (active) {
        if (active.times !== null) active.times -= 1;
        const extra: Record<string, string> = {};
        if (active.retryAfter) extra["retry-after"] = active.retryAfter;
        if (active.location) extra.location = active.location;
        response.writeHead(active.status, { "content-type": "text/plain", ...extra }).end(`status ${active.status}`);
        return;
      }
      response.writeHead(200, { "content-type": "text/plain" }).end("received");
      return;
    }
    response.writeHead(404).end();
  });
}
