/**
 * Outbound mail behind one interface. In development mode every message lands in the
 * relay's own outbox (readable at /__dev/mail) and nothing leaves the machine; in
 * production it goes through Cloudflare's `send_email` binding, or, when the operator set
 * `MAIL_HTTP_URL` (a self-hoster without Cloudflare Email Routing), as a JSON POST to
 * that HTTP mail API.
 */
import { desc, eq } from "drizzle-orm";
import { devMail } from "../db/schema";
import { db } from "../db/client";
import { config } from "../config";
import { newId, nowIso } from "../auth/tokens";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

export function devOutbox(env: { DB: D1Database }): Mailer {
  return {
    async send(message) {
      await db(env).insert(devMail).values({ id: newId("m"), ...message, createdAt: nowIso() });
    },
  };
}

/** The development outbox, newest first (at most 100), optionally only the mail to one address. */
export async function devOutboxMessages(env: { DB: D1Database }, to?: string): Promise<Array<typeof devMail.$inferSelect>> {
  const query = db(env).select().from(devMail);
  return (to ? query.where(eq(devMail.to, to)) : query).orderBy(desc(devMail.createdAt), desc(devMail.id)).limit(100);
}

/** Builds a minimal RFC 5322 message with text and HTML parts for the send_email binding. */
export function rawMime(from: string, message: MailMessage, boundary = `b${crypto.randomUUID()}`): string {
  const header = (s: string) => s.replace(/[\r\n]+/g, " ");
  return [
    `From: ${header(from)}`, `To: ${header(message.to)}`, `Subject: ${header(message.subject)}`,
    `Message-ID: <${crypto.randomUUID()}@${from.split("@")[1] ?? "relay"}>`, `Date: ${new Date().toUTCString()}`,
    "MIME-Version: 1.0", `Content-Type: multipart/alternative; boundary="${boundary}"`, "",
    `--${boundary}`, "Content-Type: text/plain; charset=utf-8", "", message.text, "",
    `--${boundary}`, "Content-Type: text/html; charset=utf-8", "", message.html, "",
    `--${boundary}--`, "",
  ].join("\r\n");
}

export function cloudflareMail(env: { MAIL: SendEmail }, from: string): Mailer {
  return {
    async send(message) {
      const { EmailMessage } = await import("cloudflare:email");
      await env.MAIL.send(new EmailMessage(from, message.to, rawMime(from, message)));
    },
  };
}

/** How long the HTTP mail API may take to accept one message. */
export const MAIL_HTTP_TIMEOUT_MS = 15_000;

/**
 * An HTTP mail API: `POST <url>` with `{ from, to, subject, text, html }` as JSON and the
 * token as `Authorization: Bearer`; any 2xx is accepted, anything else throws.
 */
export function httpMail(target: { url: string; token: string | null }, from: string, fetcher: typeof fetch = fetch): Mailer {
  return {
    async send(message) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (target.token !== null) headers.authorization = `Bearer ${target.token}`;
      const res = await fetcher(target.url, {
        method: "POST", headers, redirect: "manual", signal: AbortSignal.timeout(MAIL_HTTP_TIMEOUT_MS),
        body: JSON.stringify({ from, to: message.to, subject: message.subject, text: message.text, html: message.html }),
      });
      await res.body?.cancel();
      if (res.status < 200 || res.status >= 300) throw new Error(`the mail API answered ${res.status}`);
    },
  };
}

export function mailer(env: Env): Mailer {
  const cfg = config(env);
  if (cfg.development) return devOutbox(env);
  return cfg.mailHttp ? httpMail(cfg.mailHttp, cfg.mailFrom) : cloudflareMail(env, cfg.mailFrom);
}
