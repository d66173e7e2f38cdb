/**
 * The approval page of the relay's MCP authorization server (`/oauth/authorize`; the
 * app-origin hand-off keeps `/authorize`). An MCP client sends its person here; they sign in
 * the usual way, see which client asks (its self-declared name, and the host its access will
 * be sent to, with a warning when that is their own computer), and pick WHICH of their
 * agents the client will act as — the device-flow page is the model. Approving mints a key
 * of that agent for the grant (src/mcp/oauth/authorization-server.ts says why); denying
 * sends the client `access_denied`. The provider library validates the request (client,
 * exact redirect URI, PKCE S256) and keeps it server-side between the two requests, bound
 * to this browser; the form carries only its handle, the decision and the agent.
 */
import type { AuthorizationError, AuthRequest, ConsentDescription } from "@cloudflare/workers-oauth-provider";
import { agentsOfHuman, mintKey, type AgentRow } from "../../db/agents";
import { RelayError } from "../../errors";
import { MCP_SCOPE, OAUTH_AUTHORIZE_PATH, oauthHelpers, oauthLibrary, type McpGrantMetadata, type McpGrantProps } from "../../mcp/oauth/authorization-server";
import { grantKeysOf, retireKeysOfEndedGrants } from "../../mcp/oauth/grant-keys";
import type { AppContext, HumanCaller } from "../types";
import { currentHuman, pageCsp, readForm, renderPage, toSignIn } from "./page";
import type { PageRoute } from "./routes";

/** The agents a client may be given: the person's own, unless paused (a paused agent can act as no one). */
async function eligibleAgents(env: Env, humanId: string): Promise<AgentRow[]> {
  return (await agentsOfHuman(env, humanId)).filter((agent) => agent.pausedAt === null);
}

function agentLabel(agent: AgentRow): string {
  return agent.name ?? "Unnamed agent";
}

/** A refusal the library raised about the request itself (bad client, redirect URI, PKCE, a used or foreign handle). */
function requestRefused(err: AuthorizationError): RelayError {
  return new RelayError("oauth_request_invalid", err.description ?? `The authorization request was refused (${err.code}).`, { oauth_error: err.code });
}

/** The client must prove possession with PKCE S256, whatever kind of client it registered as. */
function hasPkce(request: AuthRequest): boolean {
  return Boolean(request.codeChallenge) && request.codeChallengeMethod === "S256";
}

function ClientFacts({ details }: { details: ConsentDescription }) {
  return (
    <>
      <p>The MCP client <strong id="oauth-client-name">{details.clientName}</strong> asks to use the relay's tools as one of your
        agents: to deploy and run apps under your account, with exactly that agent's access.</p>
      <p>Its name is what it registered itself with, so it is not verified. Access will be sent to{" "}
        <strong id="oauth-redirect-host">{details.redirectHost}</strong>.</p>
      {details.redirectIsLoopback
        ? <p class="note" id="oauth-loopback-warning">That is a program on your own computer. Continue only if you just started connecting it yourself.</p>
        : null}
    </>
  );
}

function AgentChoice({ agents }: { agents: AgentRow[] }) {
  return (
    <fieldset>
      <legend>Act as which agent?</legend>
      {agents.map((agent) => (
        <div class="field">
          <label>
            <input type="radio" name="agent_id" value={agent.id} required checked={agents.length === 1} data-agent-id={agent.id} />{" "}
            {agentLabel(agent)} <span class="muted">({agent.id})</span>
          </label>
        </div>
      ))}
    </fieldset>
  );
}

/** RFC 6749 §3.1: a parameter sent twice makes the request ambiguous (which client? which redirect?); the library reads the first. `resource` may repeat (the library refuses that itself, RFC 8707). */
function assertNoRepeats(query: URLSearchParams): void {
  for (const name of new Set(query.keys())) {
    if (name !== "resource" && query.getAll(name).length > 1) {
      throw new RelayError("oauth_request_invalid", `The authorization request names ${name.slice(0, 40)} more than once.`, { field: name.slice(0, 40) });
    }
  }
}

async function showRequest(c: AppContext): Promise<Response> {
  assertNoRepeats(new URL(c.req.url).searchParams);
  const { AuthorizationError, authorizationErrorRedirect } = await oauthLibrary();
  const helpers = await oauthHelpers(c.env);
  let request: AuthRequest;
  try {
    request = await helpers.parseAuthRequest(c.req.raw);
  } catch (err) {
    if (!(err instanceof AuthorizationError)) throw err;
    if (err.redirectTo) return c.redirect(err.redirectTo, 302);
    throw requestRefused(err);
  }
  if (!hasPkce(request)) return c.redirect(authorizationErrorRedirect(request, "invalid_request", "PKCE with code_challenge_method=S256 is required"), 302);
  const human = await currentHuman(c);
  const here = `${OAUTH_AUTHORIZE_PATH}?${new URL(c.req.url).searchParams.toString()}`;
  if (!human) return toSignIn(c, here);
  const details = await helpers.describeConsent(request);
  const agents = await eligibleAgents(c.env, human.humanId);
  const consent = await helpers.beginConsent(request);
  return renderPage(c, 200, "Connect an MCP client?", (
    <>
      <ClientFacts details={details} />
      <form method="post" action={OAUTH_AUTHORIZE_PATH}>
        <input type="hidden" name="handle" value={consent.handle} />
        {agents.length > 0
          ? <AgentChoice agents={agents} />
          : <p id="oauth-no-agents">You have no agent it could act as yet (or all are paused). Connect an agent first, then start again from the client.</p>}
        <div class="actions">
          {agents.length > 0 ? <button type="submit" name="decision" value="approve" class="primary" id="approve">Approve</button> : null}
          <button type="submit" name="decision" value="deny" class="danger" id="deny">Deny</button>
        </div>
      </form>
    </>
  ), { "Content-Security-Policy": pageCsp([new URL(request.redirectUri).origin]), "Set-Cookie": consent.headers.get("set-cookie")! });
}

/** The chosen agent, which must be one the page offered. */
async function chosenAgent(env: Env, human: HumanCaller, agentId: string | null): Promise<AgentRow> {
  if (!agentId) throw new RelayError("invalid_request", "Choose the agent the client will act as.", { field: "agent_id" });
  const agent = (await eligibleAgents(env, human.humanId)).find((candidate) => candidate.id === agentId);
  if (!agent) throw new RelayError("invalid_request", "That agent is not one of yours, or it is paused.", { field: "agent_id" });
  return agent;
}

function redirectWith(headers: Headers, location: string): Response {
  headers.set("Location", location);
  return new Response(null, { status: 302, headers });
}

async function approve(c: AppContext, human: HumanCaller, handle: string, agentId: string | null): Promise<Response> {
  const agent = await chosenAgent(c.env, human, agentId);
  const helpers = await oauthHelpers(c.env);
  const approved = await helpers.approveConsent(c.req.raw, handle, { scope: [MCP_SCOPE] });
  const replaced = await grantKeysOf(c.env, human.humanId, approved.request.clientId);
  const key = await mintKey(c.env, agent.id);
  const props: McpGrantProps = { agentId: agent.id, keyId: key.keyId, agentKey: key.apiKey };
  const metadata: McpGrantMetadata = { agentId: agent.id, keyId: key.keyId };
  const { redirectTo } = await helpers.completeAuthorization({ request: approved.request, userId: human.humanId, metadata, scope: [MCP_SCOPE], props });
  await retireKeysOfEndedGrants(c.env, human.humanId, replaced);
  return redirectWith(approved.headers, redirectTo);
}

async function decide(c: AppContext): Promise<Response> {
  const form = await readForm(c);
  const human = await currentHuman(c);
  if (!human) throw new RelayError("unauthorized", "Sign in first, then start again from your MCP client.");
  const handle = form.get("handle") ?? "";
  const decision = form.get("decision");
  if (!handle || handle.length > 200) throw new RelayError("invalid_request", "The form carries no request handle; start again from your MCP client.", { field: "handle" });
  if (decision !== "approve" && decision !== "deny") throw new RelayError("invalid_request", "Choose Approve or Deny.", { field: "decision" });
  try {
    if (decision === "deny") {
      const denied = await (await oauthHelpers(c.env)).denyConsent(c.req.raw, handle);
      return new Response(null, { status: 302, headers: denied.headers });
    }
    return await approve(c, human, handle, form.get("agent_id"));
  } catch (err) {
    if (err instanceof (await oauthLibrary()).AuthorizationError) throw requestRefused(err);
    throw err;
  }
}

export function mcpAuthorizePages(route: PageRoute): void {
  route("get", OAUTH_AUTHORIZE_PATH, showRequest);
  route("post", OAUTH_AUTHORIZE_PATH, decide);
}
