/**
 * The development mail outbox (CONTRACT §3): in development mode every message the relay
 * would send is kept and listed here, newest first, so people and tests can follow
 * sign-in links without a mail server. A browser (a client that accepts text/html) gets a
 * readable page with clickable links; any other client gets the JSON of CONTRACT §3.
 */
import type { Hono } from "hono";
import { devOutboxMessages } from "../../mail/mailer";
import type { AppContext, AppEnv } from "../types";
import { requireDevelopment } from "./development-only";
import { renderDevMailPage } from "./mail-page";

export interface DevMailView {
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  created_at: string;
}

/** Whether the client asked for HTML before (or instead of) JSON, as a browser does. */
export function prefersHtml(c: AppContext): boolean {
  const weights = new Map<string, number>();
  for (const part of (c.req.header("accept") ?? "").split(",")) {
    const [type, ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    weights.set(type.trim(), q ? Number(q.slice(2)) || 0 : 1);
  }
  const html = weights.get("text/html") ?? 0;
  return html > 0 && html >= (weights.get("application/json") ?? 0);
}

export function devMailRoutes(app: Hono<AppEnv>): void {
  app.get("/__dev/mail", async (c) => {
    requireDevelopment(c);
    const to = c.req.query("to")?.trim().toLowerCase() || undefined;
    const messages: DevMailView[] = (await devOutboxMessages(c.env, to))
      .map((m) => ({ id: m.id, to: m.to, subject: m.subject, text: m.text, html: m.html, created_at: m.createdAt }));
    c.header("vary", "accept");
    if (prefersHtml(c)) return c.html(renderDevMailPage(messages, to ?? null));
    return c.json({ messages });
  });
}
