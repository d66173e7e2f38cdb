/**
 * The forms of an owned app's access sections (grant links and service credentials) in
 * the console. Each form is read into the same body the /v1 routes take (a grant link's
 * optional pin, a credential's mode, allowlist and members flag included), checked by the
 * same schema and handed to the same functions (`mintGrantLink`, `revokeGrant`,
 * `mintCredential`, `setPaused`, `rotate`, `revoke`). A mint or rotate answers with a
 * page showing the link or token once (never a redirect, so it never sits in a URL or
 * the history); the other actions redirect back with a flash. A refusal the owner can fix
 * re-renders the app page with the message in that section and the refusal's status.
 */
import type * as z from "zod";
import { RelayError } from "../../errors";
import { mintCredential, revoke, rotate, setPaused } from "../../apps/credentials";
import { requireLiveManifest } from "../../apps/live-manifest";
import { mintGrantLink, revokeGrant } from "../../apps/grant-links";
import type { AppRow } from "../../db/apps";
import { parseWith } from "../routes";
import { requireLive } from "../v1/app-access";
import { OPS, mintBody as credentialBody } from "../v1/credentials";
import { mintBody as grantBody } from "../v1/grants";
import type { AppContext, HumanCaller } from "../types";
import { type AccessSection, Secret } from "./app-access-view";
import { appPage, myApp } from "./app-members";
import { membersPath } from "./owner-app";
import { currentHuman, readForm, renderPage, seeOther, toSignIn } from "./page";
import type { PageRoute } from "./routes";

type GrantInput = NonNullable<z.input<typeof credentialBody>["grants"]>[number];
type Handler = (c: AppContext, human: HumanCaller, app: AppRow, form: URLSearchParams) => Promise<Response>;

/** Signed in, the app is theirs and live, the form is read; fixable refusals re-render the page. */
function accessForm(section: AccessSection, handler: Handler) {
  return async (c: AppContext): Promise<Response> => {
    const human = await currentHuman(c);
    if (!human) return toSignIn(c, "/console/apps");
    const app = requireLive(await myApp(c, human));
    const form = await readForm(c);
    try {
      return await handler(c, human, app, form);
    } catch (err) {
      if (err instanceof RelayError && ["invalid_request", "conflict", "not_found"].includes(err.code)) {
        return appPage(c, app, err.status, null, "", { section, text: err.message });
      }
      throw err;
    }
  };
}

/** A whole number from an optional form field (empty: undefined), refused in the schema's words otherwise. */
function whole(form: URLSearchParams, name: string): number | undefined {
  const text = (form.get(name) ?? "").trim();
  if (text === "") return undefined;
  if (!/^[0-9]{1,9}$/.test(text)) throw new RelayError("invalid_request", `${name}: enter a whole number.`, { field: name });
  return Number(text);
}

function back(app: AppRow, flash: string): string {
  return `${membersPath(app)}?flash=${flash}`;
}

function creator(human: HumanCaller): string {
  return `human:${human.humanId}`;
}

/**
 * The optional pin: a row key, or a where list written as JSON. Only reading happens here
 * (JSON text to a value); whether it is a pin at all (one of the two, a valid key, valid
 * conditions) is the schema's call, as on /v1. Undefined when both fields are empty.
 */
function pinFrom(form: URLSearchParams): unknown {
  const rowKey = (form.get("pin_row_key") ?? "").trim();
  const whereText = (form.get("pin_where") ?? "").trim();
  if (rowKey === "" && whereText === "") return undefined;
  let where: unknown;
  if (whereText !== "") {
    try {
      where = JSON.parse(whereText);
    } catch {
      throw new RelayError("invalid_request",
        'pin_where: this is not JSON. Write a list of conditions, such as [{"field": "project", "op": "eq", "value": "a"}].', { field: "pin_where" });
    }
  }
  return { ...(rowKey !== "" ? { row_key: rowKey } : {}), ...(whereText !== "" ? { where } : {}) };
}

const mintGrant: Handler = async (c, human, app, form) => {
  const days = whole(form, "ttl_days");
  const pin = pinFrom(form);
  const body: z.input<typeof grantBody> = {
    role: form.get("role") ?? "",
    mode: (form.get("mode") || "multi") as "once" | "multi",
    max_uses: whole(form, "max_uses") ?? null,
    label: form.get("label") ?? "",
    ...(days !== undefined ? { ttl_seconds: days * 86_400 } : {}),
    // Checked by the schema below, like a /v1 body.
    ...(pin !== undefined ? { pin: pin as z.input<typeof grantBody>["pin"] } : {}),
  };
  const input = parseWith(grantBody, body, "body");
  const { row, url } = await mintGrantLink(c.env, app, await requireLiveManifest(c.env, app), input, creator(human));
  return renderPage(c, 201, `Grant link for ${app.slug}`, (
    <Secret app={app} what={`Created a ${row.mode} grant link for the role ${row.role}.`} value={url}
      note="Send it to the people who should use the app with this role; whoever opens it is let in." back={membersPath(app)} />
  ));
};

const revokeGrantForm: Handler = async (c, _human, app) => {
  await revokeGrant(c.env, app, c.req.param("grantId")!);
  return seeOther(c, back(app, "grant-revoked"));
};

/**
 * The allowlist from the form, in the order the collections were named: a collection with
 * ticked operations, or with "no access" ticked (an entry without operations: under
 * `following` it carves the collection out). Every named collection is passed on, declared
 * or not, so `checkGrants` refuses an unknown one exactly as on /v1.
 */
function grantsFrom(form: URLSearchParams): GrantInput[] {
  const named: string[] = [];
  for (const [field] of form) {
    const m = /^(ops|none):(.*)$/s.exec(field);
    if (m && !named.includes(m[2])) named.push(m[2]);
  }
  return named.map((collection) => {
    const ops = form.getAll(`ops:${collection}`);
    if (form.get(`none:${collection}`) && ops.length) {
      throw new RelayError("invalid_request", `Collection "${collection.slice(0, 64)}": tick operations or "no access", not both.`, { field: `none:${collection.slice(0, 64)}` });
    }
    return { collection, ops: ops as Array<(typeof OPS)[number]>, ...(form.get(`own:${collection}`) ? { scope: "own" as const } : {}) };
  });
}

const mintCredentialForm: Handler = async (c, human, app, form) => {
  const manifest = await requireLiveManifest(c.env, app);
  const days = whole(form, "ttl_days");
  const input = parseWith(credentialBody, {
    mode: (form.get("mode") || "explicit") as "explicit" | "following",
    grants: grantsFrom(form),
    members: form.get("members") !== null,
    label: form.get("label") ?? "",
    ...(days !== undefined ? { ttl_seconds: days * 86_400 } : {}),
    ...(form.get("no_expiry") ? { no_expiry: true } : {}),
  }, "body");
  const { row, token } = await mintCredential(c.env, app, manifest, input, creator(human));
  return renderPage(c, 201, `Service credential for ${app.slug}`, (
    <Secret app={app} what={`Created the service credential ${row.label ?? row.tokenPrefix}.`} value={token}
      note="Give it to the backend as its bearer token; the relay keeps only a hash of it." back={membersPath(app)} />
  ));
};

function pauseForm(paused: boolean): Handler {
  return async (c, _human, app) => {
    await setPaused(c.env, app, c.req.param("credentialId")!, paused);
    return seeOther(c, back(app, paused ? "credential-paused" : "credential-resumed"));
  };
}

const rotateForm: Handler = async (c, _human, app, form) => {
  const hours = whole(form, "overlap_hours");
  const { row, token } = await rotate(c.env, app, c.req.param("credentialId")!, hours === undefined ? undefined : hours * 3600);
  const old = row.previousExpiresAt ? `The old token keeps working until ${row.previousExpiresAt}.` : "The old token stopped working at once.";
  return renderPage(c, 200, `Service credential for ${app.slug}`, (
    <Secret app={app} what={`Rotated the service credential ${row.label ?? row.tokenPrefix}.`} value={token} note={old} back={membersPath(app)} />
  ));
};

const revokeCredentialForm: Handler = async (c, _human, app) => {
  await revoke(c.env, app, c.req.param("credentialId")!);
  return seeOther(c, back(app, "credential-revoked"));
};

export function appAccessPages(route: PageRoute): void {
  const P = "/console/apps/:id";
  route("post", `${P}/grants`, accessForm("grants", mintGrant));
  route("post", `${P}/grants/:grantId/revoke`, accessForm("grants", revokeGrantForm));
  route("post", `${P}/credentials`, accessForm("credentials", mintCredentialForm));
  route("post", `${P}/credentials/:credentialId/pause`, accessForm("credentials", pauseForm(true)));
  route("post", `${P}/credentials/:credentialId/resume`, accessForm("credentials", pauseForm(false)));
  route("post", `${P}/credentials/:credentialId/rotate`, accessForm("credentials", rotateForm));
  route("post", `${P}/credentials/:credentialId/revoke`, accessForm("credentials", revokeCredentialForm));
}
