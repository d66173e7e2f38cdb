/**
 * The signed-in person's account in the console: their profile (the same view as
 * `GET /v1/self`), product-update email on or off (the same change as
 * `PUT /v1/self/marketing-consent`), what they use against the relay's limits (the same
 * summary as `GET /v1/self/usage`), and the way to delete the account (`/account/delete`,
 * which mails a confirmation link first).
 */
import * as z from "zod";
import { config } from "../../config";
import { setMarketingConsent } from "../../db/humans";
import { usageSummary } from "../../account/usage";
import { parseWith } from "../routes";
import { profileOf } from "../v1/self";
import type { AppContext } from "../types";
import { Flash, sizeText } from "./layout";
import { appPath } from "./owner-app";
import { currentHuman, lookup, readForm, renderPage, seeOther, toSignIn } from "./page";
import type { PageRoute } from "./routes";

const flashes: Record<string, string> = {
  "marketing-on": "You will get product-update email.",
  "marketing-off": "You will no longer get product-update email.",
};

const FLOW_WORDS: Record<string, string> = {
  emails: "Emails sent", push_notifications: "Push notifications", webhook_deliveries: "Webhook deliveries",
  ingest_deliveries: "Inbound hook deliveries", agent_tasks: "Agent tasks",
};

type Usage = Awaited<ReturnType<typeof usageSummary>>;

function UsageSection({ usage }: { usage: Usage }) {
  return (
    <section aria-labelledby="usage-heading">
      <h2 id="usage-heading">Usage</h2>
      <p id="usage-apps">{`${usage.meters.apps.used} of ${usage.meters.apps.limit} apps; ${usage.meters.rows.used} rows and ${sizeText(usage.meters.storage_bytes.used)} stored in all.`}</p>
      {usage.apps.length ? (
        <table id="usage-per-app">
          <thead><tr><th scope="col">App</th><th scope="col">Rows</th><th scope="col">Stored</th></tr></thead>
          <tbody>{usage.apps.map((a) => (
            <tr data-app-id={a.app_id}>
              <th scope="row"><a href={appPath({ id: a.app_id })}>{a.slug}</a></th>
              <td>{`${a.rows} of ${a.row_limit}`}</td>
              <td>{`${sizeText(a.storage_bytes)} of ${sizeText(a.storage_limit)}`}</td>
            </tr>
          ))}</tbody>
        </table>
      ) : null}
      <h3>This month</h3>
      <table id="usage-month" class="narrow">
        <tbody>{Object.entries(usage.month.flows).map(([metric, count]) => (
          <tr data-metric={metric}><th scope="row">{FLOW_WORDS[metric] ?? metric}</th><td>{count}</td></tr>
        ))}</tbody>
      </table>
    </section>
  );
}

async function showAccount(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, "/console/account");
  const [profile, usage] = await Promise.all([profileOf(c), usageSummary(c.env, config(c.env), human.humanId)]);
  return renderPage(c, 200, "Your account", (
    <>
      <Flash text={lookup(flashes, c.req.query("flash"))} />
      <section aria-labelledby="profile-heading">
        <h2 id="profile-heading">Profile</h2>
        <dl id="profile" class="facts">
          <dt>Email</dt><dd data-fact="email">{profile.email}</dd>
          <dt>Name</dt><dd data-fact="name">{profile.name ?? <span class="muted">not set (shown as {profile.display_name})</span>}</dd>
        </dl>
      </section>
      <section aria-labelledby="marketing-heading">
        <h2 id="marketing-heading">Product-update email</h2>
        <p id="marketing" data-consent={profile.marketing_consent ? "on" : "off"}>
          {profile.marketing_consent ? "On: we may email you about new features." : "Off: we email you only what your account needs (sign-in links, invitations, notifications you set up)."}
        </p>
        <form method="post" action="/console/account/marketing">
          <input type="hidden" name="marketing_consent" value={profile.marketing_consent ? "off" : "on"} />
          <button type="submit" id="toggle-marketing">{profile.marketing_consent ? "Turn product-update email off" : "Turn product-update email on"}</button>
        </form>
      </section>
      <UsageSection usage={usage} />
      <section aria-labelledby="delete-account-heading">
        <h2 id="delete-account-heading">Delete your account</h2>
        <p><a href="/account/delete" id="delete-account">Delete your account…</a> We email you a link to confirm first.</p>
      </section>
    </>
  ));
}

const marketingForm = z.object({ marketing_consent: z.enum(["on", "off"]) });

async function toggleMarketing(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, "/console/account");
  const form = await readForm(c);
  const { marketing_consent: choice } = parseWith(marketingForm, { marketing_consent: form.get("marketing_consent") ?? undefined }, "body");
  await setMarketingConsent(c.env, human.humanId, choice === "on");
  return seeOther(c, `/console/account?flash=marketing-${choice}`);
}

export function accountPages(route: PageRoute): void {
  route("get", "/console/account", showAccount);
  route("post", "/console/account/marketing", toggleMarketing);
}
