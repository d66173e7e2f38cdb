/**
 * The mails an app's notify rules send (WIRE §5.5): one notification as itself — the
 * rule's rendered subject and body — or a burst for one recipient as one digest listing
 * each. Plain text first, with a simple HTML twin in which every value from a row is
 * escaped. A footer names the app and why the mail came.
 */
import type { MailMessage } from "./mailer";
import { escapeHtml } from "./templates";

export interface NotificationText {
  subject: string;
  body: string;
  /** An absolute URL on the app's origin (the rule's `link`), or null. */
  url: string | null;
}

export interface NotifyingApp {
  name: string;
  /** The app's own address. */
  url: string;
}

const oneLine = (s: string) => s.replace(/[\r\n]+/g, " ").trim();

function htmlText(s: string): string {
  return escapeHtml(s).replace(/\r?\n/g, "<br>");
}

function footer(app: NotifyingApp, toMember: boolean): { text: string; html: string } {
  const why = toMember
    ? `You get this mail because the app "${app.name}" notifies you of changes to its data.`
    : `You get this mail because this address was entered in the app "${app.name}".`;
  return {
    text: `\n\n--\n${why}\n${app.url}\n`,
    html: `<hr><p style="color:#666">${escapeHtml(why)} <a href="${escapeHtml(app.url)}">${escapeHtml(app.url)}</a></p>`,
  };
}

/** One notification, or several as a digest, for one address. `toMember`: a person of the app (not a submitter). */
export function notificationMail(to: string, app: NotifyingApp, items: NotificationText[], toMember: boolean): MailMessage {
  const end = footer(app, toMember);
  if (items.length === 1) {
    const [item] = items;
    const open = item.url ? { text: `\n\nOpen: ${item.url}`, html: `<p><a href="${escapeHtml(item.url)}">Open</a></p>` } : { text: "", html: "" };
    return {
      to,
      subject: oneLine(item.subject),
      text: `${item.body}${open.text}${end.text}`,
      html: `<p>${htmlText(item.body)}</p>${open.html}${end.html}`,
    };
  }
  const text = items.map((item) => `* ${oneLine(item.subject)}\n${item.body}${item.url ? `\nOpen: ${item.url}` : ""}`).join("\n\n");
  const html = items.map((item) => `<li><p><strong>${escapeHtml(oneLine(item.subject))}</strong><br>${htmlText(item.body)}`
    + `${item.url ? `<br><a href="${escapeHtml(item.url)}">Open</a>` : ""}</p></li>`).join("");
  return {
    to,
    subject: `${items.length} notifications from ${oneLine(app.name)}`,
    text: `${items.length} notifications from ${app.name}:\n\n${text}${end.text}`,
    html: `<p>${items.length} notifications from <strong>${escapeHtml(app.name)}</strong>:</p><ul>${html}</ul>${end.html}`,
  };
}
