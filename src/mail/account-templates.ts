/**
 * The mails of the account and ownership parts: an ownership-transfer offer, the notice
 * to the previous owner once it is accepted, and the account-deletion confirmation.
 * Plain text first, with a simple HTML twin (as in templates.ts).
 */
import type { MailMessage } from "./mailer";

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);
}

function oneLine(s: string): string {
  return s.replace(/[\r\n]+/g, " ");
}

export function transferOfferMail(to: string, appName: string, fromEmail: string, link: string, expiresAt: string): MailMessage {
  return {
    to,
    subject: `${oneLine(fromEmail)} offers you the app ${oneLine(appName)}`,
    text: `${fromEmail} offers to make you the owner of the app "${appName}".\n\nOpen this link to accept (it works once, until ${expiresAt}, and only for ${to}):\n\n${link}\n\nYou will be asked to sign in with this address first. Nothing changes until you accept; if you do not want the app, ignore this mail.\n`,
    html: `<p>${escapeHtml(fromEmail)} offers to make you the owner of the app <strong>${escapeHtml(appName)}</strong>.</p><p><a href="${escapeHtml(link)}">Review and accept the transfer</a> (it works once, until ${escapeHtml(expiresAt)}, and only for ${escapeHtml(to)}).</p><p>You will be asked to sign in with this address first. Nothing changes until you accept; if you do not want the app, ignore this mail.</p>`,
  };
}

export function transferAcceptedMail(to: string, appName: string, newOwnerEmail: string, keptAsMember: boolean, credentialsRevoked = 0): MailMessage {
  const stays = keptAsMember ? "You stay on the app as a member." : "You no longer have access to it.";
  const revoked = credentialsRevoked === 0 ? ""
    : ` Its ${credentialsRevoked === 1 ? "service credential was" : `${credentialsRevoked} service credentials were`} revoked, so backends using ${credentialsRevoked === 1 ? "it" : "them"} are refused from now on; the new owner can mint new ones.`;
  const after = stays + revoked;
  return {
    to,
    subject: `${oneLine(appName)} now belongs to ${oneLine(newOwnerEmail)}`,
    text: `${newOwnerEmail} accepted your offer: the app "${appName}" is now theirs. ${after}\n`,
    html: `<p>${escapeHtml(newOwnerEmail)} accepted your offer: the app <strong>${escapeHtml(appName)}</strong> is now theirs. ${escapeHtml(after)}</p>`,
  };
}

export function accountDeletionMail(to: string, link: string): MailMessage {
  return {
    to,
    subject: "Confirm deleting your account on the relay",
    text: `Someone signed in as ${to} asked to delete this account.\n\nOpen this link to confirm (it works once, for one hour):\n\n${link}\n\nDeleting moves every app you own to the trash (purged after 30 days), revokes your agents' keys, removes you from other people's apps and organizations, and signs you out everywhere. If you did not ask for this, ignore this mail: nothing happens.\n`,
    html: `<p>Someone signed in as ${escapeHtml(to)} asked to delete this account.</p><p><a href="${escapeHtml(link)}">Confirm deleting the account</a> (it works once, for one hour).</p><p>Deleting moves every app you own to the trash (purged after 30 days), revokes your agents' keys, removes you from other people's apps and organizations, and signs you out everywhere. If you did not ask for this, ignore this mail: nothing happens.</p>`,
  };
}
