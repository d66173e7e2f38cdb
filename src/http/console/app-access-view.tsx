/**
 * The access sections of an owned app's console page: its grant links (listed without
 * token material, with their pin; a form to mint one for a declared custom role, optionally
 * pinned to a row key or a where list; revoke) and its service credentials (listed by
 * prefix, with their mode and member-list access; a form to mint one, explicit or
 * following, with an allowlist of collections, operations, "own rows only" and "no
 * access", and the members flag; pause, resume, rotate with an overlap, revoke). The
 * forms post to the routes in `app-access.tsx`; a token is only ever shown on the page
 * that answers the mint or rotate post (`Secret`), never in a URL.
 */
import type { GrantView } from "../../apps/grant-links";
import type { CredentialView } from "../../apps/credentials";
import type { AppRow } from "../../db/apps";
import { OPS } from "../v1/credentials";
import { Alert, When } from "./layout";

export type AccessSection = "grants" | "credentials";

/** A refusal to show in one access section (the members form has its own). */
export interface AccessProblem {
  section: AccessSection;
  text: string;
}

export interface AccessData {
  grants: GrantView[];
  credentials: CredentialView[];
  roles: string[];
  collections: string[];
}

function base(app: AppRow): string {
  return `/console/apps/${encodeURIComponent(app.id)}`;
}

function Uses({ g }: { g: GrantView }) {
  return <>{g.use_count} of {g.max_uses === null ? "unlimited" : g.max_uses}{g.claim_count !== g.use_count ? ` (${g.claim_count} opens)` : ""}</>;
}

function Pin({ g }: { g: GrantView }) {
  if (g.pin_row_key !== null) return <>row <code>{g.pin_row_key}</code></>;
  if (g.pin_where) {
    return <>{g.pin_where.map((c, i) => <>{i ? " and " : "where "}<code>{`${c.field} ${c.op} ${JSON.stringify(c.value)}`}</code></>)}</>;
  }
  return <span class="muted">none</span>;
}

function grantState(g: GrantView): string {
  if (g.revoked_at) return "revoked";
  return g.active ? "active" : "expired";
}

function GrantLinks({ app, data, problem }: { app: AppRow; data: AccessData; problem: AccessProblem | null }) {
  const b = base(app);
  return (
    <section aria-labelledby="grants-heading">
      <h2 id="grants-heading">Grant links</h2>
      <p>A grant link lets whoever opens it use the app with one custom role, without an account. Its address is shown once, when you create it.</p>
      {data.grants.length ? (
        <table id="grants">
          <thead><tr><th scope="col">Label</th><th scope="col">Role</th><th scope="col">Mode</th><th scope="col">Pin</th><th scope="col">Uses</th><th scope="col">State</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
          <tbody>{data.grants.map((g) => (
            <tr data-grant-id={g.id} data-state={grantState(g)}>
              <th scope="row">{g.label ?? <span class="muted">no label</span>}</th>
              <td><code>{g.role}</code></td>
              <td>{g.mode}</td>
              <td class="pin"><Pin g={g} /></td>
              <td><Uses g={g} /></td>
              <td>{grantState(g)}</td>
              <td><When iso={g.expires_at} /></td>
              <td>{g.revoked_at ? null : (
                <form method="post" action={`${b}/grants/${encodeURIComponent(g.id)}/revoke`}>
                  <button type="submit" class="danger" data-action="revoke-grant">Revoke<span class="vh"> the link {g.label ?? g.id}</span></button>
                </form>
              )}</td>
            </tr>
          ))}</tbody>
        </table>
      ) : <p id="no-grants">No grant links yet.</p>}
      <h3>Create a grant link</h3>
      {problem?.section === "grants" ? <Alert text={problem.text} /> : null}
      {data.roles.length ? (
        <form method="post" action={`${b}/grants`} id="mint-grant">
          <div class="field">
            <label for="grant-role">Role</label>
            <select id="grant-role" name="role" required>{data.roles.map((r) => <option value={r}>{r}</option>)}</select>
          </div>
          <div class="field">
            <label for="grant-mode">Mode</label>
            <select id="grant-mode" name="mode">
              <option value="multi">multi: several people may open it</option>
              <option value="once">once: the first browser to open it</option>
            </select>
          </div>
          <div class="field">
            <label for="grant-max-uses">Most people (empty: no limit)</label>
            <input type="number" id="grant-max-uses" name="max_uses" min={1} max={1000000} />
          </div>
          <div class="field">
            <label for="grant-label">Label</label>
            <input type="text" id="grant-label" name="label" maxlength={200} autocomplete="off" />
          </div>
          <div class="field">
            <label for="grant-ttl">Works for (days; empty: 30)</label>
            <input type="number" id="grant-ttl" name="ttl_days" min={1} max={3650} />
          </div>
          <fieldset id="grant-pin">
            <legend>Pin (optional)</legend>
            <p class="muted">Narrows what the link reaches within its role: one row by its key, or the rows matching
              every condition of a where list. Fill in one of the two, or neither for the role's whole reach.</p>
            <div class="field">
              <label for="grant-pin-row-key">Row key</label>
              <input type="text" id="grant-pin-row-key" name="pin_row_key" maxlength={128} autocomplete="off" />
            </div>
            <div class="field">
              <label for="grant-pin-where">Where conditions (JSON list of field, op, value)</label>
              <textarea id="grant-pin-where" name="pin_where" rows={3} style="width:100%;font-family:monospace"
                placeholder='[{"field": "project", "op": "eq", "value": "a"}]'></textarea>
            </div>
          </fieldset>
          <button type="submit" class="primary" id="create-grant">Create link</button>
        </form>
      ) : <p class="muted" id="no-roles">This app declares no custom roles; a grant link confers one.</p>}
    </section>
  );
}

function credentialState(v: CredentialView): string {
  if (v.revoked_at) return "revoked";
  if (v.paused) return "paused";
  return v.active ? "active" : "expired";
}

function Allowlist({ v }: { v: CredentialView }) {
  const entries = v.grants.map((g) => <span><code>{g.collection}</code>: {g.ops.join(", ") || "no access"}{g.scope === "own" ? " (own rows)" : ""}<br /></span>);
  if (v.mode === "following") return <>{v.grants.length ? <span>follows the owner, except:<br /></span> : <span>follows the owner</span>}{entries}</>;
  if (!v.grants.length) return <span class="muted">nothing</span>;
  return <>{entries}</>;
}

function CredentialRowView({ app, v }: { app: AppRow; v: CredentialView }) {
  const b = `${base(app)}/credentials/${encodeURIComponent(v.id)}`;
  const name = v.label ?? v.token_prefix;
  const state = credentialState(v);
  return (
    <tr data-credential-id={v.id} data-state={state} data-mode={v.mode} data-members={v.members ? "yes" : "no"}>
      <th scope="row">{v.label ?? <span class="muted">no label</span>}</th>
      <td><code>{v.token_prefix}…</code>{v.previous_token_prefix ? <><br /><span class="muted">old <code>{v.previous_token_prefix}…</code> until <When iso={v.previous_expires_at} /></span></> : null}</td>
      <td>{v.mode}</td>
      <td><Allowlist v={v} /></td>
      <td>{v.members ? "reads it" : <span class="muted">no</span>}</td>
      <td>{state}</td>
      <td><When iso={v.expires_at} /></td>
      <td><When iso={v.last_used_at} /></td>
      <td>{v.revoked_at ? null : (
        <>
          <form method="post" action={`${b}/${v.paused ? "resume" : "pause"}`}>
            <button type="submit" data-action={v.paused ? "resume" : "pause"}>{v.paused ? "Resume" : "Pause"}<span class="vh"> {name}</span></button>
          </form>
          {state === "expired" ? null : (
            <form method="post" action={`${b}/rotate`}>
              <label for={`overlap-${v.id}`}>Old token keeps working for (hours)</label>
              <input type="number" id={`overlap-${v.id}`} name="overlap_hours" min={0} max={168} value="24" />
              <button type="submit" data-action="rotate">Rotate<span class="vh"> {name}</span></button>
            </form>
          )}
          <form method="post" action={`${b}/revoke`}>
            <button type="submit" class="danger" data-action="revoke">Revoke<span class="vh"> {name}</span></button>
          </form>
        </>
      )}</td>
    </tr>
  );
}

function Credentials({ app, data, problem }: { app: AppRow; data: AccessData; problem: AccessProblem | null }) {
  return (
    <section aria-labelledby="credentials-heading">
      <h2 id="credentials-heading">Service credentials</h2>
      <p>A service credential lets a backend read and write this app's collections, only as far as its allowlist says. Its token is shown once, when you create or rotate it. When someone accepts a transfer of the app, every credential is revoked.</p>
      {data.credentials.length ? (
        <table id="credentials">
          <thead><tr><th scope="col">Label</th><th scope="col">Token</th><th scope="col">Mode</th><th scope="col">Allowlist</th><th scope="col">Member list</th><th scope="col">State</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
          <tbody>{data.credentials.map((v) => <CredentialRowView app={app} v={v} />)}</tbody>
        </table>
      ) : <p id="no-credentials">No service credentials yet.</p>}
      <h3>Create a service credential</h3>
      {problem?.section === "credentials" ? <Alert text={problem.text} /> : null}
      {data.collections.length ? (
        <form method="post" action={`${base(app)}/credentials`} id="mint-credential">
          <div class="field">
            <label for="credential-label">Label</label>
            <input type="text" id="credential-label" name="label" maxlength={200} autocomplete="off" />
          </div>
          <div class="field">
            <label for="credential-mode">Mode</label>
            <select id="credential-mode" name="mode">
              <option value="explicit">explicit: only what is ticked below</option>
              <option value="following">following: whatever you may do, narrowed where ticked below</option>
            </select>
          </div>
          <p class="muted">Under explicit, a collection with nothing ticked is out of reach. Under following, it follows
            your own access; ticking operations narrows it to them, and "no access" carves it out.</p>
          {data.collections.map((col) => (
            <fieldset>
              <legend>Collection <code>{col}</code></legend>
              {OPS.map((op) => (
                <span>
                  <input type="checkbox" name={`ops:${col}`} value={op} id={`cred-${col}-${op}`} />{" "}
                  <label for={`cred-${col}-${op}`} style="display:inline;font-weight:normal">{op}</label>{" "}
                </span>
              ))}
              <span>
                <input type="checkbox" name={`own:${col}`} value="1" id={`cred-${col}-own`} />{" "}
                <label for={`cred-${col}-own`} style="display:inline;font-weight:normal">only rows it wrote</label>{" "}
              </span>
              <span>
                <input type="checkbox" name={`none:${col}`} value="1" id={`cred-${col}-none`} />{" "}
                <label for={`cred-${col}-none`} style="display:inline;font-weight:normal">no access</label>
              </span>
            </fieldset>
          ))}
          <div>
            <input type="checkbox" name="members" value="1" id="credential-members" />{" "}
            <label for="credential-members" style="display:inline;font-weight:normal">May read the app's member list (emails and roles)</label>
          </div>
          <div class="field">
            <label for="credential-ttl">Works for (days; empty: 365)</label>
            <input type="number" id="credential-ttl" name="ttl_days" min={1} max={3650} />
          </div>
          <div>
            <input type="checkbox" name="no_expiry" value="1" id="credential-no-expiry" />{" "}
            <label for="credential-no-expiry" style="display:inline;font-weight:normal">Never expires</label>
          </div>
          <button type="submit" class="primary" id="create-credential">Create credential</button>
        </form>
      ) : <p class="muted" id="no-collections">This app declares no collections.</p>}
    </section>
  );
}

export function AccessSections({ app, data, problem }: { app: AppRow; data: AccessData; problem: AccessProblem | null }) {
  return (
    <>
      <GrantLinks app={app} data={data} problem={problem} />
      <Credentials app={app} data={data} problem={problem} />
    </>
  );
}

/** The once-only page after a mint or rotate: the secret, what it is, and the way back. */
/** A link or token shown once, on the page answering the post that made it; `back` is the page to return to. */
export function Secret({ app, what, value, note, back }: { app: AppRow; what: string; value: string; note: string; back: string }) {
  return (
    <>
      <p class="flash" role="status" id="flash">{what}</p>
      <p><strong>Copy it now: it is shown only this once.</strong> {note}</p>
      <p><code id="secret">{value}</code></p>
      <p><a href={back} id="back">Back to {app.slug}</a></p>
    </>
  );
}
