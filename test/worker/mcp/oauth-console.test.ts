// The console's list of MCP clients connected through OAuth: the person sees each client,
// where its access goes and which agent it acts as; Disconnect ends the grant and revokes
// the key it held, so the client's token stops at once; nobody else can disconnect it.
import { describe, expect, it } from "vitest";
import { call, claimedAgent, count, expectError, signIn } from "../helpers";
import { mcpPost } from "./rpc";
import { authorizeAs } from "./oauth-flow";

const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };

describe("connected MCP clients in the console", () => {
  it("lists the client and its agent, and Disconnect stops its token and its key", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human, "console-listed agent");
    const { tokens } = await authorizeAs(human, agent.agent_id);
    expect((await mcpPost(LIST, { key: tokens.access_token })).status).toBe(200);

    const home = await (await call("/", { session: human.session })).text();
    expect(home).toContain('href="/console/mcp-clients"');
    const page = await call("/console/mcp-clients", { session: human.session });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain("Test MCP client");
    expect(html).toContain("console-listed agent");
    expect(html).toContain("127.0.0.1:33418");
    const grantId = /data-grant-id="([^"]+)"/.exec(html)![1];

    const stranger = await signIn();
    const foreign = await call(`/console/mcp-clients/${grantId}/disconnect`, { method: "POST", session: stranger.session });
    expect(foreign.status).toBe(404);
    expect((await mcpPost(LIST, { key: tokens.access_token })).status).toBe(200);

    const liveKeys = await count("agent_keys", "agent_id = ?1 AND revoked_at IS NULL", agent.agent_id);
    const done = await call(`/console/mcp-clients/${grantId}/disconnect`, { method: "POST", session: human.session });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe("/console/mcp-clients?flash=disconnected");
    await expectError(await mcpPost(LIST, { key: tokens.access_token }), 401, "oauth_token_invalid");
    expect(await count("agent_keys", "agent_id = ?1 AND revoked_at IS NULL", agent.agent_id)).toBe(liveKeys - 1);
    expect(await (await call("/console/mcp-clients", { session: human.session })).text()).toContain('id="no-mcp-clients"');

    const again = await call(`/console/mcp-clients/${grantId}/disconnect`, { method: "POST", session: human.session });
    expect(again.status).toBe(404);
    const forged = await call(`/console/mcp-clients/${grantId}/disconnect`, { method: "POST", session: human.session, origin: "http://evil.example" });
    expect(forged.status).toBe(403);
    expect((await call("/console/mcp-clients")).status).toBe(302);
  });
});
