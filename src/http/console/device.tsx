/**
 * The RFC 8628 verification page (`verification_uri_complete` points here). Anyone with
 * the code sees which agent asks for access, when it asked and the code it shows, so the
 * person can check it against their agent before anything else; signing in is the step
 * before approving, and brings them back here. A signed-in person approves or denies it.
 * Approval only records the decision (decideDeviceCode); the agent's next poll of
 * /v1/device/token receives the key. After deciding, the page reads the code's state
 * back from the database, so what it says is what happened.
 */
import { decideDeviceCode, findDeviceCodeByUserCode, normaliseUserCode, type DeviceCodeRow } from "../../db/codes";
import { RelayError } from "../../errors";
import type { AppContext, HumanCaller } from "../types";
import { Alert, When } from "./layout";
import { currentHuman, readForm, renderPage, seeOther, toSignIn } from "./page";
import type { PageRoute } from "./routes";

function deviceUrl(code: string | null): string {
  return code ? `/device?code=${encodeURIComponent(code)}` : "/device";
}

function CodeForm({ code, error }: { code: string; error: string | null }) {
  return (
    <>
      <Alert text={error} />
      <form method="get" action="/device">
        <div class="field">
          <label for="user-code">Code shown by your agent</label>
          <input type="text" id="user-code" name="code" value={code} required autocomplete="off" autocapitalize="characters"
            spellcheck={false} maxlength={32} placeholder="ABCD-EFGH" aria-describedby={error ? "form-error" : undefined} />
        </div>
        <button type="submit" class="primary" id="find-code">Continue</button>
      </form>
    </>
  );
}

function isExpired(row: DeviceCodeRow): boolean {
  return Date.parse(row.expiresAt) <= Date.now();
}

/** Who asks, when, and the code to compare with the agent's. */
function Request({ row }: { row: DeviceCodeRow }) {
  return (
    <>
      <p>An agent named <strong id="device-agent-name">{row.name}</strong> asked at <When iso={row.createdAt} /> to act on the relay
        as you: to deploy and run apps under your account.</p>
      <p>Check that your agent shows this same code: <code class="secret" id="device-user-code">{row.userCode}</code></p>
      <p class="note">Approve only if you started this yourself just now. The request expires at <When iso={row.expiresAt} />.</p>
    </>
  );
}

/** The page for a code in whatever state it is in, with the matching status; signed out, a pending code asks to sign in. */
function codePage(c: AppContext, human: HumanCaller | null, typed: string, row: DeviceCodeRow | undefined): Response | Promise<Response> {
  if (!row) {
    return renderPage(c, 404, "Connect an agent", (
      <CodeForm code={typed} error="No request with that code is waiting. Check the code your agent shows and try again." />
    ));
  }
  const mine = human !== null && row.humanId === human.humanId;
  if (mine && (row.status === "approved" || row.status === "consumed")) {
    return renderPage(c, 200, "Agent approved", (
      <p role="status" id="device-result" data-result="approved">
        You approved <strong>{row.name}</strong>. It receives its key the next time it checks in, within seconds,
        and appears in <a href="/">your console</a>. You can close this page.
      </p>
    ));
  }
  if (mine && row.status === "denied") {
    return renderPage(c, 200, "Request denied", (
      <p role="status" id="device-result" data-result="denied">
        You denied <strong>{row.name}</strong>. It gets no key. <a href="/">Back to your console</a>.
      </p>
    ));
  }
  if (row.status !== "pending") {
    return renderPage(c, 409, "Code already used", (
      <CodeForm code="" error="This code was already approved or denied. Ask your agent to start again for a new code." />
    ));
  }
  if (isExpired(row)) {
    return renderPage(c, 410, "Code expired", (
      <CodeForm code="" error="This code has expired (codes last 15 minutes). Ask your agent to start again for a new code." />
    ));
  }
  if (!human) {
    return renderPage(c, 200, "Approve agent access?", (
      <>
        <Request row={row} />
        <p id="sign-in-step">To approve or deny it, sign in first; you come back to this page.</p>
        <p><a href={`/signin?return_to=${encodeURIComponent(deviceUrl(row.userCode))}`} class="button primary" id="sign-in-to-approve">Sign in to approve</a></p>
      </>
    ));
  }
  return renderPage(c, 200, "Approve agent access?", (
    <>
      <Request row={row} />
      <form method="post" action="/device" class="actions">
        <input type="hidden" name="code" value={row.userCode} />
        <button type="submit" name="decision" value="approve" class="primary" id="approve">Approve</button>
        <button type="submit" name="decision" value="deny" class="danger" id="deny">Deny</button>
      </form>
    </>
  ));
}

async function showDevice(c: AppContext): Promise<Response> {
  const typed = (c.req.query("code") ?? "").trim();
  const human = await currentHuman(c);
  if (!typed) {
    return renderPage(c, 200, "Connect an agent", (
      <>
        <p>Your agent showed you a code like <code>ABCD-EFGH</code>. Type it here to see what it asks for.</p>
        {human ? null : <p class="muted" id="sign-in-later">You sign in before approving it.</p>}
        <CodeForm code="" error={null} />
      </>
    ));
  }
  return codePage(c, human, typed, await findDeviceCodeByUserCode(c.env, typed));
}

async function decide(c: AppContext): Promise<Response> {
  const form = await readForm(c);
  const typed = (form.get("code") ?? "").trim();
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, deviceUrl(typed || null));
  const decision = form.get("decision");
  if (!typed) throw new RelayError("invalid_request", "The form carries no code.", { field: "code" });
  if (decision !== "approve" && decision !== "deny") {
    throw new RelayError("invalid_request", "Choose Approve or Deny.", { field: "decision" });
  }
  if (await decideDeviceCode(c.env, typed, human.humanId, decision === "approve")) {
    return seeOther(c, deviceUrl(normaliseUserCode(typed)));
  }
  return codePage(c, human, typed, await findDeviceCodeByUserCode(c.env, typed));
}

export function devicePages(route: PageRoute): void {
  route("get", "/device", showDevice);
  route("post", "/device", decide);
}
