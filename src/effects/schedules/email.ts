/**
 * A schedule rule's email action (WIRE §5.5 schedules[]): the reminder for one row, its
 * `subject` and `body` plain-text templates rendered against the row, mailed to the app's
 * owner and/or members (the only targets a schedule may name). `members` means everyone
 * with access as a member, the owner included; each address gets one mail however the
 * targets overlap. A mail that cannot be sent is logged and the rest still go.
 */
import { errorLogLine } from "../../db/query-errors";
import { config } from "../../config";
import { getHuman } from "../../db/humans";
import type { AppRow } from "../../db/apps";
import { membersOf } from "../../apps/members";
import { appUrl } from "../../apps/urls";
import { escapeHtml } from "../../http/serve/html";
import { mailer, type MailMessage } from "../../mail/mailer";
import type { ScheduleAction } from "../../manifest";
import { renderTextTemplate } from "../../rules/templates";

export type EmailAction = Extract<ScheduleAction, { kind: "email" }>;

/** The addresses an email action reaches, each once; read once per app scan. */
export class ReminderRecipients {
  private owner: Promise<string[]> | null = null;
  private members: Promise<string[]> | null = null;

  constructor(private readonly env: Env, private readonly app: AppRow) {}

  async of(action: EmailAction): Promise<string[]> {
    const lists = await Promise.all(action.to.map((target) => (target === "owner" ? this.ownerAddress() : this.memberAddresses())));
    return [...new Set(lists.flat())];
  }

  private ownerAddress(): Promise<string[]> {
    this.owner ??= getHuman(this.env, this.app.ownerHumanId).then((owner) => (owner?.email ? [owner.email] : []));
    return this.owner;
  }

  private memberAddresses(): Promise<string[]> {
    this.members ??= membersOf(this.env, this.app).then((members) => members.map((member) => member.email).filter((email) => email !== ""));
    return this.members;
  }
}

/** The reminder mail for one recipient: the rendered subject on one line, the rendered body, and a line naming the app it came from. */
export function reminderMail(to: string, action: EmailAction, data: unknown, appName: string, link: string): MailMessage {
  const subject = renderTextTemplate(action.subject, data).replace(/[\r\n]+/g, " ").trim() || `A reminder from ${appName}`;
  const body = renderTextTemplate(action.body, data);
  const footer = `A scheduled reminder from the app "${appName}" (${link}).`;
  return {
    to,
    subject,
    text: `${body}\n\n--\n${footer}\n`,
    html: `<p>${escapeHtml(body).replace(/\r?\n/g, "<br>")}</p><hr><p>${escapeHtml(footer)}</p>`,
  };
}

/** Mails one row's reminder to every recipient of the action; answers how many were sent. */
export async function sendReminder(
  env: Env, app: AppRow, appName: string, recipients: ReminderRecipients, action: EmailAction, data: unknown,
): Promise<number> {
  const link = appUrl(config(env), app.slug);
  let sent = 0;
  for (const to of await recipients.of(action)) {
    try {
      await mailer(env).send(reminderMail(to, action, data, appName, link));
      sent += 1;
    } catch (err) {
      console.error(`schedules: the reminder of app ${app.id} to one recipient could not be sent`, errorLogLine(err));
    }
  }
  return sent;
}
