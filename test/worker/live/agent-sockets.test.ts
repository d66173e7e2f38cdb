// An agent's feed sockets end when its keys stop holding: the owner pausing it, revoking
// its keys or rotating them, and the agent revoking the key it calls with. The socket
// closes with 1012 on every app of the owner before the change's answer, gets no row
// written afterwards, and a reconnect with the dead key is refused. A second agent of the
// same owner keeps streaming.
import { describe, expect, it } from "vitest";
import { call, claimedAgent, json } from "../helpers";
import { agentCreate, agentProtocols, liveApp, liveManifest, Socket, type Frame, socketsClosedAfterEach } from "./helpers";

const sockets = socketsClosedAfterEach();

const watch = (slug: string, key: string): Promise<Socket> => sockets.subscribed(slug, agentProtocols(key));

const rows = (frames: Frame[]) => frames.filter((f) => f.type === "entry" || (f.type === "batch" && (f.entries as unknown[]).length > 0));

/** Two apps of one owner, each watched by the agent that deployed them and by a second agent. */
async function watched() {
  const { who, app } = await liveApp();
  const second = await json<{ app_id: string; slug: string }>(await call("/v1/apps", { key: who.agent.api_key, json: { html: "<p>two</p>", manifest: liveManifest() } }), 201);
  const other = await claimedAgent(who.human);
  const sockets = {
    first: await watch(app.slug, who.agent.api_key),
    second: await watch(second.slug, who.agent.api_key),
    bystander: await watch(app.slug, other.api_key),
  };
  return { who, apps: [app, second], other, sockets };
}

async function expectEnded(t: Awaited<ReturnType<typeof watched>>): Promise<void> {
  for (const s of [t.sockets.first, t.sockets.second]) expect((await s.whenClosed()).code).toBe(1012);
  await agentCreate(t.other.api_key, t.apps[0].app_id, "notes", { after: true });
  const entry = await t.sockets.bystander.next();
  expect(entry).toMatchObject({ type: "entry" });
  for (const s of [t.sockets.first, t.sockets.second]) expect(rows(s.frames)).toEqual([]);
}

const agentRoute = (t: Awaited<ReturnType<typeof watched>>, verb: string) =>
  call(`/v1/self/agents/${t.who.agent.agent_id}/${verb}`, { method: "POST", session: t.who.human.session });

describe("an agent's feed sockets", () => {
  it("close when the owner pauses the agent, and a reconnect is refused until it is resumed", async () => {
    const t = await watched();
    await json(await agentRoute(t, "pause"), 200);
    await expectEnded(t);
    const again = await Socket.open(t.apps[0].slug, agentProtocols(t.who.agent.api_key));
    expect(again).toBeInstanceOf(Response);
    expect((again as Response).status).toBe(401);
    await json(await agentRoute(t, "resume"), 200);
    await watch(t.apps[0].slug, t.who.agent.api_key);
  });

  it("close when the owner revokes the agent's keys", async () => {
    const t = await watched();
    await json(await agentRoute(t, "revoke-key"), 200);
    await expectEnded(t);
  });

  it("close when the owner rotates the key; the new key watches again", async () => {
    const t = await watched();
    const rotated = await json<{ api_key: string }>(await agentRoute(t, "rotate-key"), 200);
    await expectEnded(t);
    await watch(t.apps[0].slug, rotated.api_key);
  });

  it("close when the agent revokes the key it calls with", async () => {
    const t = await watched();
    const res = await call(`/v1/keys/${t.who.agent.agent_id}`, { method: "DELETE", key: t.who.agent.api_key });
    expect(res.status).toBe(204);
    await expectEnded(t);
  });
});
