/**
 * The development mail outbox (CONTRACT §3): in development mode every message the relay
 * would send is kept and listed here, newest first, so people and tests can follow
 * sign-in links without a mail server. Outside development mode the path is 404.
 */
import type { Hono } from "hono";
import { config } from "../config";
import { RelayError } from "../errors";
import { devOutboxMessages } from "../mail/mailer";
import type { AppEnv } from "./types";

export function devMailRoutes(app: Hono<AppEnv>): void {
  app.get("/__dev/mail", async (c) => {
    if (!config(c.env).development) throw new RelayError("not_found", "Nothing exists at this path.");
    const to = c.req.query("to")?.trim().toLowerCase();
    const rows = await devOutboxMessages(c.env, to);
    return c.json({
      messages: rows.map((m) => ({ id: m.id, to: m.to, subject: m.subject, text: m.text, html: m.html, created_at: m.createdAt })),
    });
  });
}
