/**
 * The console home: the agents this person owns, with the buttons that pause, resume or
 * revoke an agent's key, and the way to connect another agent (a claim code). The
 * buttons are plain forms; each posts, acts through the same db functions as
 * /v1/self/agents/:id/*, and redirects back here with a flash message.
 */
import { agentsOfHuman } from "../../db/agents";
import { pauseAgent, resumeAgent, revokeAgentKeys } from "../../account/agent-control";
import { revokeSession } from "../../db/humans";
import { clearSessionCookie } from "../v1/human-auth";
import { ownedAgent, viewOwnedAgent } from "../v1/self";
import type { AppContext } from "../types";
import { Flash, When } from "./layout";
import { currentHuman, lookup, renderPage, seeOther, toSignIn } from "./page";
import type { PageRoute } from "./routes";

type AgentView = ReturnType<typeof viewOwnedAgent>;

const flashes: Record<string, (name: string) => string> = {
  paused: (name) => `Paused ${name}. Its key answers 401 until you resume it.`,
  resumed: (name) => `Resumed ${name}. Its key works again.`,
  revoked: (name) => `Revoked the key of ${name}. This cannot be undone.`,
};

function label(agent: AgentView): string {
  return agent.name ?? agent.id;
}

function lastUsed(agent: AgentView): string | null {
  return agent.keys.map((k) => k.last_used_at).filter((t): t is string => t !== null).sort().at(-1) ?? null;
}

function ActionButton({ agent, verb, text, danger }: { agent: AgentView; verb: string; text: string; danger?: boolean }) {
  return (
    <form method="post" action={`/console/agents/${encodeURIComponent(agent.id)}/${verb}`}>
      <button type="submit" class={danger ? "danger" : undefined} data-action={verb}>
        {text}<span class="vh"> {label(agent)}</span>
      </button>
    </form>
  );
}

function AgentRow({ agent }: { agent: AgentView }) {
  return (
    <tr id={`agent-${agent.id}`} data-agent-id={agent.id} data-status={agent.status}>
      <th scope="row">{agent.name ?? <span class="muted">(unnamed)</span>}<br /><code class="muted">{agent.id}</code></th>
      <td data-field="status">{agent.status}</td>
      <td data-field="keys">{agent.key_prefixes.length ? agent.key_prefixes.map((p) => <><code>{p}…</code> </>) : <span class="muted">none</span>}</td>
      <td><When iso={agent.created_at} /></td>
      <td><When iso={lastUsed(agent)} /></td>
      <td>
        {agent.status === "active" ? <ActionButton agent={agent} verb="pause" text="Pause" /> : null}
        {agent.status === "paused" ? <ActionButton agent={agent} verb="resume" text="Resume" /> : null}
        {agent.status !== "revoked" ? (
          <details>
            <summary>Revoke key<span class="vh"> of {label(agent)}</span>…</summary>
            <p>The agent loses access for good; it would have to register again.</p>
            <ActionButton agent={agent} verb="revoke-key" text="Revoke key permanently" danger />
          </details>
        ) : null}
      </td>
    </tr>
  );
}

async function home(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, "/");
  const agents = (await agentsOfHuman(c.env, human.humanId)).map(viewOwnedAgent);
  const flashAgent = agents.find((a) => a.id === c.req.query("agent"));
  const flash = lookup(flashes, c.req.query("flash"));

  return renderPage(c, 200, "Your console", (
    <>
      <Flash text={flash && flashAgent ? flash(label(flashAgent)) : null} />
      <p><a href="/console/apps" id="my-apps">Your apps and their members</a> ·{" "}
        <a href="/console/mcp-clients" id="my-mcp-clients">MCP clients connected through OAuth</a></p>
      <section aria-labelledby="agents-heading">
        <h2 id="agents-heading">Your agents</h2>
        {agents.length ? (
          <table id="agents">
            <thead>
              <tr><th scope="col">Agent</th><th scope="col">Status</th><th scope="col">Key prefixes</th>
                <th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Actions</th></tr>
            </thead>
            <tbody>{agents.map((agent) => <AgentRow agent={agent} />)}</tbody>
          </table>
        ) : (
          <p id="no-agents">No agents yet. Connect one below, or approve the code an agent shows you at <a href="/device">/device</a>.</p>
        )}
      </section>
      <section aria-labelledby="connect-heading">
        <h2 id="connect-heading">Connect an agent</h2>
        <p>A claim code binds an agent that registered on its own to you. It works once, within 15 minutes.</p>
        <form method="post" action="/console/claim-codes">
          <button type="submit" class="primary" id="mint-claim-code">Mint a claim code</button>
        </form>
      </section>
    </>
  ));
}

/** Pause, resume and revoke: act on an agent this person owns, then back to the list. */
function agentAction(flash: string, act: (c: AppContext, agentId: string, humanId: string) => Promise<void>) {
  return async (c: AppContext): Promise<Response> => {
    const human = await currentHuman(c);
    if (!human) return toSignIn(c, "/");
    const agent = await ownedAgent(c, c.req.param("id")!);
    await act(c, agent.id, human.humanId);
    return seeOther(c, `/?flash=${flash}&agent=${encodeURIComponent(agent.id)}`);
  };
}

async function logout(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (human) await revokeSession(c.env, human.sessionId);
  clearSessionCookie(c);
  return seeOther(c, "/signin?flash=signed_out");
}

export function homePages(route: PageRoute): void {
  route("get", "/", home);
  route("post", "/console/agents/:id/pause", agentAction("paused", (c, id, humanId) => pauseAgent(c.env, humanId, id)));
  route("post", "/console/agents/:id/resume", agentAction("resumed", (c, id) => resumeAgent(c.env, id)));
  route("post", "/console/agents/:id/revoke-key", agentAction("revoked", (c, id, humanId) => revokeAgentKeys(c.env, humanId, id)));
  route("post", "/console/logout", logout);
}
