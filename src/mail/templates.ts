/**
 * The text of the mails the relay sends. Plain text first (it is what most agents and
 * tests read), with a simple HTML twin.
 */
import type { MailMessage } from "./mailer";

export function escapeHtml(s: string): string {
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

export function memberInviteMail(to: string, appName: string, link: string): MailMessage {
  return {
    to,
    subject: `You are invited to ${appName.replace(/[\r\n]+/g, " ")}`,
    text: `You have been invited to use the app "${appName}".\n\nOpen this link to accept (it works once, for 7 days, and only for ${to}):\n\n${link}\n\nYou will be asked to sign in with this address first. If you do not want to join, ignore this mail.\n`,
    html: `<p>You have been invited to use the app <strong>${escapeHtml(appName)}</strong>.</p><p><a href="${escapeHtml(link)}">Accept the invitation</a> (it works once, for 7 days, and only for ${escapeHtml(to)}).</p><p>You will be asked to sign in with this address first. If you do not want to join, ignore this mail.</p>`,
  };
}

export function memberAddedMail(to: string, appName: string, appLink: string): MailMessage {
  return {
    to,
    subject: `You now have access to ${appName.replace(/[\r\n]+/g, " ")}`,
    text: `You were added as a member of the app "${appName}".\n\nOpen it here (sign in with ${to} when asked):\n\n${appLink}\n`,
    html: `<p>You were added as a member of the app <strong>${escapeHtml(appName)}</strong>.</p><p><a href="${escapeHtml(appLink)}">Open it</a> (sign in with ${escapeHtml(to)} when asked).</p>`,
  };
}
