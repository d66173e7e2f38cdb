/**
 * The text of the mails the relay sends. Plain text first (it is what most agents and
 * tests read), with a simple HTML twin.
 */
import type { MailMessage } from "./mailer";

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);
}

export function magicLinkMail(to: string, link: string): MailMessage {
  return {
    to,
    subject: "Your sign-in link for the relay",
    text: `Open this link to sign in (it works once, for 15 minutes):\n\n${link}\n\nIf you did not ask for it, ignore this mail.\n`,
    html: `<p>Open this link to sign in (it works once, for 15 minutes):</p><p><a href="${escapeHtml(link)}">Sign in</a></p><p>If you did not ask for it, ignore this mail.</p>`,
  };
}
