/**
 * The console's list of MCP clients this person connected through OAuth (the approval page
 * is mcp-authorize.tsx): each client's self-declared name, where its access goes, which
 * agent it acts as and since when, with a Disconnect button that ends its grant and revokes
 * the key it held (src/mcp/oauth/connected-clients.ts). Pausing the agent or revoking its
 * keys on the home page stops these clients too.
 */
import { agentsOfHuman } from "../../db/agents";
import { RelayError } from "../../errors";
import { connectedClients, disconnectClient, type ConnectedClient } from "../../mcp/oauth/connected-clients";
import type { AppContext } from "../types";
import { Flash, When } from "./layout";
import { currentHuman, lookup, renderPage, seeOther, toSignIn } from "./page";
import type { PageRoute } from "./routes";

const HERE = "/console/mcp-clients";

const flashes: Record<string, string> = {
  disconnected: "Disconnected. The client's tokens and the key it held no longer work.",
};

function ClientRow({ client, agentName }: { client: ConnectedClient; agentName: string }) {
  return (
    <tr data-grant-id={client.grantId}>
      <td data-field="client">{client.clientName}</td>
      <td data-field="redirect-host">{client.redirectHost ?? <span class="muted">unknown</span>}</td>
      <td data-field="agent">{agentName}</td>
      <td><When iso={client.connectedAt} /></td>
      <td><When iso={client.expiresAt} /></td>
      <td>
        <form method="post" action={`${HERE}/${encodeURIComponent(client.grantId)}/disconnect`}>
          <button type="submit" class="danger" data-action="disconnect">Disconnect</button>
        </form>
      </td>
    </tr>
  );
}

async function list(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, HERE);
  const [clients, agents] = await Promise.all([connectedClients(c.env, human.humanId), agentsOfHuman(c.env, human.humanId)]);
  const agentName = (agentId: string | null) => {
    const agent = agents.find((candidate) => candidate.id === agentId);
    return agent ? agent.name ?? agent.id : "an agent no longer yours";
  };
  return renderPage(c, 200, "Connected MCP clients", (
    <>
      <Flash text={lookup(flashes, c.req.query("flash"))} />
      <p>MCP clients you approved through the relay's sign-in page. Each acts as the agent you picked, with exactly its access.
        Names are what the clients call themselves.</p>
      {clients.length ? (
        <table id="mcp-clients">
          <thead>
            <tr><th scope="col">Client</th><th scope="col">Access sent to</th><th scope="col">Acts as</th>
              <th scope="col">Connected</th><th scope="col">Ends</th><th scope="col">Actions</th></tr>
          </thead>
          <tbody>{clients.map((client) => <ClientRow client={client} agentName={agentName(client.agentId)} />)}</tbody>
        </table>
      ) : <p id="no-mcp-clients">No MCP client is connected. An agent that uses an API key does not appear here.</p>}
    </>
  ));
}

async function disconnect(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, HERE);
  const grantId = c.req.param("grantId") ?? "";
  if (!(await disconnectClient(c.env, human.humanId, grantId))) {
    throw new RelayError("not_found", "You have no connected MCP client with that id; it may be disconnected already.", { grant_id: grantId.slice(0, 100) });
  }
  return seeOther(c, `${HERE}?flash=disconnected`);
}

export function mcpClientPages(route: PageRoute): void {
  route("get", HERE, list);
  route("post", `${HERE}/:grantId/disconnect`, disconnect);
}
