// The owner console, driven like a browser without JavaScript would: form posts with an
// Origin header, redirects read by hand, the session cookie carried between requests,
// and sign-in through the link in the development outbox. Runs inside workerd.
import { dispatch } from "./helpers";
import { describe, expect, it } from "vitest";

const BASE = "http://localhost:8787";
let clientSeq = 0;

/** One visitor: its own fake client address (the per-IP limiter) and cookie. */
class Visitor {
  readonly ip = `198.18.${Math.floor(Math.random() * 250)}.${++clientSeq % 250}`;
  cookie: string | null = null;

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.send(path, { method: "GET", headers });
  }

  /** A form post as a browser sends it: urlencoded, with the page's Origin unless told otherwise. */
  async post(path: string, fields: Record<string, string> = {}, origin: string | null = BASE): Promise<Response> {
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
    if (origin !== null) headers.origin = origin;
    return this.send(path, { method: "POST", headers, body: new URLSearchParams(fields).toString() });
  }

  async send(path: string, init: RequestInit & { headers?: Record<string, string> }): Promise<Response> {
    const headers: Record<string, string> = { "cf-connecting-ip": this.ip, ...(init.headers ?? {}) };
    if (this.cookie) headers.cookie = this.cookie;
    const res = await dispatch(new Request(path.startsWith("http") ? path : `${BASE}${path}`, { ...init, headers, redirect: "manual" }));
    const set = res.headers.get("set-cookie");
    if (set?.startsWith("relay_session=")) {
      const pair = set.split(";")[0];
      this.cookie = pair === "relay_session=" ? null : pair;
    }
    return res;
  }

  async api(path: string, method: string, body?: unknown, key?: string): Promise<Response> {
    const headers: Record<string, string> = { "cf-connecting-ip": this.ip, "content-type": "application/json" };
    if (key) headers.authorization = `Bearer ${key}`;
    return dispatch(new Request(`${BASE}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
  }
}

function uniqueEmail(tag: string): string {
  return `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}

async function latestLink(email: string): Promise<string> {
  const res = await dispatch(new Request(`${BASE}/__dev/mail?to=${encodeURIComponent(email)}`));
  const { messages } = await res.json<{ messages: Array<{ text: string }> }>();
  const link = /http:\/\/localhost:8787\/v1\/auth\/verify\?token=\S+/.exec(messages[0]?.text ?? "");
  if (!link) throw new Error(`no sign-in link mailed to ${email}`);
  return link[0];
}

async function signIn(visitor: Visitor, email = uniqueEmail("owner"), returnTo?: string): Promise<string> {
  const res = await visitor.post("/signin", returnTo ? { email, return_to: returnTo } : { email });
  expect(res.status).toBe(303);
  const verified = await visitor.get(await latestLink(email));
  expect(verified.status).toBe(302);
  expect(visitor.cookie).toMatch(/^relay_session=./);
  return email;
}

async function registerAgent(visitor: Visitor, name: string): Promise<{ agent_id: string; api_key: string; key_prefix: string }> {
  const res = await visitor.api("/v1/register", "POST", { name });
  expect(res.status).toBe(201);
  return res.json();
}

async function mintClaimCode(visitor: Visitor): Promise<string> {
  const res = await visitor.post("/console/claim-codes");
  expect(res.status).toBe(201);
  const html = await res.text();
  const code = /id="claim-code">(cc_[A-Za-z0-9_]+)</.exec(html)?.[1];
  expect(code).toBeDefined();
  expect(html).toContain(`service agent claim ${code}`);
  expect(html).toMatch(/id="claim-code-expires"><time datetime="[^"]+Z"/);
  return code!;
}

/** A human with one claimed agent. */
async function ownerWithAgent(name: string) {
  const owner = new Visitor();
  const email = await signIn(owner);
  const agent = await registerAgent(owner, name);
  const code = await mintClaimCode(owner);
  const claimed = await owner.api("/v1/agents/claim", "POST", { code }, agent.api_key);
  expect(claimed.status).toBe(200);
  return { owner, email, agent };
}

function isHtml(res: Response): void {
  expect(res.headers.get("content-type")).toMatch(/^text\/html/);
}

describe("console: signed out", () => {
  it("redirects the home page to sign-in with return_to", async () => {
    const visitor = new Visitor();
    const home = await visitor.get("/");
    expect(home.status).toBe(302);
    expect(home.headers.get("location")).toBe("/signin?return_to=%2F");
  });

  it("shows the device page before sign-in: the code form, the request's code and agent, and a sign-in step back to it", async () => {
    const visitor = new Visitor();
    const blank = await visitor.get("/device");
    expect(blank.status).toBe(200);
    const form = await blank.text();
    expect(form).toContain('<label for="user-code">');
    expect(form).toContain('id="sign-in-later"');

    const unknown = await visitor.get("/device?code=ZZZZ-ZZZZ");
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('value="ZZZZ-ZZZZ"');

    const flow = await (await visitor.api("/v1/device/code", "POST", { name: "signed-out-cli" })).json<{ user_code: string }>();
    const device = await visitor.get(`/device?code=${flow.user_code}`);
    expect(device.status).toBe(200);
    const html = await device.text();
    expect(html).toContain('<strong id="device-agent-name">signed-out-cli</strong>');
    expect(html).toContain(`id="device-user-code">${flow.user_code}<`);
    expect(html).not.toContain('value="approve"');
    expect(html).toContain(`href="/signin?return_to=${encodeURIComponent(`/device?code=${flow.user_code}`)}"`);
    // Deciding still needs a session.
    const decided = await visitor.post("/device", { code: flow.user_code, decision: "approve" });
    expect(decided.status).toBe(303);
    expect(decided.headers.get("location")).toBe(`/signin?return_to=${encodeURIComponent(`/device?code=${flow.user_code}`)}`);
  });

  it("shows an accessible sign-in form that keeps a safe return_to and drops a foreign one", async () => {
    const visitor = new Visitor();
    const res = await visitor.get(`/signin?return_to=${encodeURIComponent("/device?code=ABCD-EFGH")}`);
    expect(res.status).toBe(200);
    isHtml(res);
    const html = await res.text();
    expect(html).toContain('<label for="email">');
    expect(html).toContain('<main id="main"');
    expect(html).toContain('name="return_to" value="/device?code=ABCD-EFGH"');
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");

    const foreign = await (await visitor.get(`/signin?return_to=${encodeURIComponent("https://evil.example/")}`)).text();
    expect(foreign).not.toContain("return_to");
  });

  it("explains an unusable sign-in link", async () => {
    const visitor = new Visitor();
    const verify = await visitor.get("/v1/auth/verify?token=ml_nope");
    expect(verify.headers.get("location")).toBe("/signin?error=link_invalid");
    const html = await (await visitor.get("/signin?error=link_invalid")).text();
    expect(html).toContain('role="alert"');
    expect(html).toContain("cannot be used");
  });

  it("sends a signed-out form post to sign-in instead of acting", async () => {
    const res = await new Visitor().post("/console/claim-codes");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/signin?return_to=%2F");
  });

  it("re-shows the form with 400 for an invalid email", async () => {
    const res = await new Visitor().post("/signin", { email: "not-an-email" });
    expect(res.status).toBe(400);
    isHtml(res);
    const html = await res.text();
    expect(html).toContain('id="form-error"');
    expect(html).toContain('value="not-an-email"');
  });
});

describe("console: sign-in and the home page", () => {
  it("signs in through the mailed link, returns to return_to, and lists no agents yet", async () => {
    const visitor = new Visitor();
    const email = uniqueEmail("signin");
    const sent = await visitor.post("/signin", { email, return_to: "/device" });
    expect(sent.status).toBe(303);
    const checkMail = sent.headers.get("location")!;
    expect(checkMail).toContain("sent=");
    expect(checkMail).toContain("return_to=%2Fdevice");

    const page = await visitor.get(checkMail);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Check your mail");
    expect(html).toContain(`href="/__dev/mail?to=${encodeURIComponent(email)}"`);

    const verified = await visitor.get(await latestLink(email));
    expect(verified.status).toBe(302);
    expect(verified.headers.get("location")).toBe("/device");
    expect(visitor.cookie).toMatch(/^relay_session=/);

    const home = await visitor.get("/");
    expect(home.status).toBe(200);
    const homeHtml = await home.text();
    expect(homeHtml).toContain(`<span id="signed-in-as">${email}</span>`);
    expect(homeHtml).toContain('id="no-agents"');
    expect(homeHtml).toContain('id="mint-claim-code"');
  });

  it("mints a claim code that an agent redeems, after which the console lists the agent", async () => {
    const { owner, agent } = await ownerWithAgent("claimed-bot");
    const html = await (await owner.get("/")).text();
    expect(html).toContain(`id="agent-${agent.agent_id}"`);
    expect(html).toContain("claimed-bot");
    expect(html).toContain(`<code>${agent.key_prefix}…</code>`);
    expect(html).toMatch(new RegExp(`id="agent-${agent.agent_id}"[^>]*data-status="active"`));
    expect(html).toContain(`action="/console/agents/${agent.agent_id}/pause"`);
  });

  it("signs out: the session is revoked and the cookie cleared", async () => {
    const visitor = new Visitor();
    await signIn(visitor);
    const cookie = visitor.cookie!;
    const res = await visitor.post("/console/logout");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/signin?flash=signed_out");
    expect(res.headers.get("set-cookie")).toMatch(/^relay_session=;/);
    expect(visitor.cookie).toBeNull();

    const reuse = await dispatch(new Request(`${BASE}/`, { headers: { cookie }, redirect: "manual" }));
    expect(reuse.status).toBe(302);
    expect(await (await visitor.get("/signin?flash=signed_out")).text()).toContain("You are signed out.");
  });
});

describe("console: agent controls", () => {
  it("pauses, resumes and revokes an agent's key through the forms", async () => {
    const { owner, agent } = await ownerWithAgent("controlled-bot");
    const keys = () => owner.api("/v1/keys", "GET", undefined, agent.api_key);
    expect((await keys()).status).toBe(200);

    const paused = await owner.post(`/console/agents/${agent.agent_id}/pause`);
    expect(paused.status).toBe(303);
    expect(paused.headers.get("location")).toBe(`/?flash=paused&agent=${agent.agent_id}`);
    expect((await keys()).status).toBe(401);
    const pausedHtml = await (await owner.get(paused.headers.get("location")!)).text();
    expect(pausedHtml).toContain("Paused controlled-bot.");
    expect(pausedHtml).toMatch(/data-status="paused"/);
    expect(pausedHtml).toContain(`action="/console/agents/${agent.agent_id}/resume"`);

    const resumed = await owner.post(`/console/agents/${agent.agent_id}/resume`);
    expect(resumed.status).toBe(303);
    expect((await keys()).status).toBe(200);

    const revoked = await owner.post(`/console/agents/${agent.agent_id}/revoke-key`);
    expect(revoked.status).toBe(303);
    expect((await keys()).status).toBe(401);
    const revokedHtml = await (await owner.get("/")).text();
    expect(revokedHtml).toMatch(/data-status="revoked"/);

    // Resume never un-revokes.
    await owner.post(`/console/agents/${agent.agent_id}/resume`);
    expect((await keys()).status).toBe(401);
  });

  it("answers 404 for another human's agent and leaves it alone", async () => {
    const { agent } = await ownerWithAgent("not-yours-bot");
    const stranger = new Visitor();
    await signIn(stranger);
    for (const verb of ["pause", "revoke-key"]) {
      const res = await stranger.post(`/console/agents/${agent.agent_id}/${verb}`);
      expect(res.status).toBe(404);
      isHtml(res);
      expect(await res.text()).toContain('data-error-code="not_found"');
    }
    const keys = await stranger.api("/v1/keys", "GET", undefined, agent.api_key);
    expect(keys.status).toBe(200);
    expect(await (await stranger.get("/")).text()).not.toContain(agent.agent_id);
  });
});

describe("console: device approval", () => {
  async function startDevice(visitor: Visitor, name: string) {
    const res = await visitor.api("/v1/device/code", "POST", { name });
    expect(res.status).toBe(200);
    return res.json<{ device_code: string; user_code: string; verification_uri_complete: string }>();
  }

  it("approves: the page shows the request, and the next poll gets the key exactly once", async () => {
    const human = new Visitor();
    await signIn(human);
    const flow = await startDevice(human, "laptop-cli");
    expect(flow.verification_uri_complete).toBe(`${BASE}/device?code=${flow.user_code}`);

    const page = await human.get(flow.verification_uri_complete);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<strong id="device-agent-name">laptop-cli</strong>');
    expect(html).toContain(`id="device-user-code">${flow.user_code}<`);
    expect(html).toContain('value="approve"');
    expect(html).toContain('value="deny"');

    // A lower-case code without the dash finds the same request.
    const loose = await human.get(`/device?code=${flow.user_code.replace("-", "").toLowerCase()}`);
    expect(await loose.text()).toContain('id="device-agent-name"');

    const approved = await human.post("/device", { code: flow.user_code, decision: "approve" });
    expect(approved.status).toBe(303);
    expect(approved.headers.get("location")).toBe(`/device?code=${flow.user_code}`);
    const result = await (await human.get(approved.headers.get("location")!)).text();
    expect(result).toContain('data-result="approved"');

    const token = await human.api("/v1/device/token", "POST", { device_code: flow.device_code });
    expect(token.status).toBe(200);
    const body = await token.json<{ agent_id: string; agent_key: string; name: string }>();
    expect(body.agent_key).toMatch(/^svc_/);
    expect(body.name).toBe("laptop-cli");

    const again = await human.api("/v1/device/token", "POST", { device_code: flow.device_code });
    expect(again.status).toBe(400);
    expect((await again.json<{ error: { code: string } }>()).error.code).toBe("device_code_invalid");

    expect((await human.api("/v1/keys", "GET", undefined, body.agent_key)).status).toBe(200);
    expect(await (await human.get("/")).text()).toContain(`id="agent-${body.agent_id}"`);
  });

  it("denies: the poll answers access_denied, and a second human sees the code as used", async () => {
    const human = new Visitor();
    await signIn(human);
    const flow = await startDevice(human, "denied-cli");
    const denied = await human.post("/device", { code: flow.user_code, decision: "deny" });
    expect(denied.status).toBe(303);
    expect(await (await human.get(denied.headers.get("location")!)).text()).toContain('data-result="denied"');

    const token = await human.api("/v1/device/token", "POST", { device_code: flow.device_code });
    expect(token.status).toBe(400);
    expect((await token.json<{ error: string }>()).error).toBe("access_denied");

    const other = new Visitor();
    await signIn(other);
    const seen = await other.get(`/device?code=${flow.user_code}`);
    expect(seen.status).toBe(409);
    const approveLate = await other.post("/device", { code: flow.user_code, decision: "approve" });
    expect(approveLate.status).toBe(409);
    isHtml(approveLate);
  });

  it("offers a code form, and explains an unknown code", async () => {
    const human = new Visitor();
    await signIn(human);
    const blank = await human.get("/device");
    expect(blank.status).toBe(200);
    expect(await blank.text()).toContain('<label for="user-code">');

    const unknown = await human.get("/device?code=ZZZZ-ZZZZ");
    expect(unknown.status).toBe(404);
    const html = await unknown.text();
    expect(html).toContain('role="alert"');
    expect(html).toContain('value="ZZZZ-ZZZZ"');

    const bad = await human.post("/device", { code: "ZZZZ-ZZZZ", decision: "maybe" });
    expect(bad.status).toBe(400);
    isHtml(bad);
  });
});

describe("console: cross-site and wrong-verb requests", () => {
  it("refuses form posts without an Origin or from a foreign one with an HTML 403", async () => {
    const human = new Visitor();
    await signIn(human);
    const device = await human.api("/v1/device/code", "POST", { name: "csrf-target" });
    const flow = await device.json<{ device_code: string; user_code: string }>();

    for (const origin of [null, "https://evil.example", "http://localhost:9999"]) {
      const mint = await human.post("/console/claim-codes", {}, origin);
      expect(mint.status).toBe(403);
      isHtml(mint);
      expect(await mint.text()).toContain('data-error-code="csrf_origin_mismatch"');

      const approve = await human.post("/device", { code: flow.user_code, decision: "approve" }, origin);
      expect(approve.status).toBe(403);
      expect((await human.post("/console/logout", {}, origin)).status).toBe(403);
      expect((await human.post("/signin", { email: uniqueEmail("csrf") }, origin)).status).toBe(403);
    }
    // Nothing happened: the device request is still pending and the session still works.
    const poll = await human.api("/v1/device/token", "POST", { device_code: flow.device_code });
    expect((await poll.json<{ error: string }>()).error).toBe("authorization_pending");
    expect((await human.get("/")).status).toBe(200);

    // A same-origin Referer stands in for a missing Origin.
    const viaReferer = await human.send("/console/claim-codes", {
      method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", referer: `${BASE}/` }, body: "",
    });
    expect(viaReferer.status).toBe(201);
  });

  it("answers a wrong verb with 405, an Allow header and an HTML page", async () => {
    const visitor = new Visitor();
    const cases: Array<[string, string, string]> = [
      ["PUT", "/", "GET"], ["DELETE", "/device", "POST"], ["GET", "/console/claim-codes", "POST"],
      ["GET", "/console/logout", "POST"], ["PATCH", "/signin", "GET"], ["GET", "/console/agents/a1/pause", "POST"],
    ];
    for (const [method, path, allowed] of cases) {
      const res = await visitor.send(path, { method, headers: { origin: BASE } });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow")).toContain(allowed);
      isHtml(res);
    }
  });
});
