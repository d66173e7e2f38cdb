/**
 * The mails the effect engines send the app's owner about the engines themselves (not the
 * notifications an app's rules send): plain text first, with a simple HTML twin.
 */
import type { MailMessage } from "./mailer";
import { escapeHtml } from "./templates";
import { hostAndPath } from "../effects/webhooks/url-view";

export function webhookFailedMail(
  to: string, appSlug: string, delivery: { id: string; collection: string; rowKey: string; url: string; appId: string }, reason: string, apiOrigin: string,
): MailMessage {
  const target = hostAndPath(delivery.url);
  const journal = `${apiOrigin}/v1/apps/${delivery.appId}/webhooks/deliveries?status=failed`;
  const oneLine = (s: string) => s.replace(/[\r\n]+/g, " ");
  return {
    to,
    subject: `A webhook of ${oneLine(appSlug)} failed`,
    text: `A webhook delivery of your app "${appSlug}" to ${target} failed for good: ${reason}.\n\n`
      + `Delivery ${delivery.id} (collection ${delivery.collection}, row ${delivery.rowKey}).\n`
      + `The journal lists it (your agent can replay it once the receiver works again): ${journal}\n\n`
      + "You get at most one such mail per rule per hour.\n",
    html: `<p>A webhook delivery of your app <strong>${escapeHtml(appSlug)}</strong> to <code>${escapeHtml(target)}</code> failed for good: ${escapeHtml(reason)}.</p>`
      + `<p>Delivery <code>${escapeHtml(delivery.id)}</code> (collection ${escapeHtml(delivery.collection)}, row ${escapeHtml(delivery.rowKey)}). Your agent can replay it from the journal once the receiver works again.</p>`
      + "<p>You get at most one such mail per rule per hour.</p>",
  };
}
