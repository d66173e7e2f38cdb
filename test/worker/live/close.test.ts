// Feed sockets end where access changes: removing a member closes that human's sockets
// (and only theirs) with 1012, so the reconnect is judged without their membership; a
// visibility change and a share-link rotation send every watcher back to reconnect.
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers";
import { member, team } from "../members/fixtures";
import { Socket, agentProtocols, socketsClosedAfterEach, ownerToken } from "./helpers";
import { quietFor } from "../../support/wait";

const sockets = socketsClosedAfterEach();

const subscribed = sockets.subscribed;


describe("closing feed sockets when access changes", () => {
  it("removing a member closes that member's socket and refuses the reconnect; others stay", async () => {
    const t = await team();
    const friend = await member(t, ["writer"]);
    const other = await member(t, ["viewer"]);
    const friendToken = await ownerToken(friend, t.app.slug);
    const friendSocket = await subscribed(t.app.slug, ["service.v1", `service.session.${friendToken}`]);
    const otherSocket = await subscribed(t.app.slug, ["service.v1", `service.session.${await ownerToken(other, t.app.slug)}`]);
    const agentSocket = await subscribed(t.app.slug, agentProtocols(t.key));

    const res = await call(`${t.path}/members/${friend.humanId}`, { method: "DELETE", key: t.key });
    expect(res.status).toBe(204);
    expect((await friendSocket.whenClosed()).code).toBe(1012);

    const again = await Socket.open(t.app.slug, ["service.v1", `service.session.${friendToken}`]);
    expect(again).toBeInstanceOf(Response);
    expect((again as Response).status).toBe(401);

    // A negative: the others' sockets stay open a while after the friend's was closed.
    await quietFor(100);
    expect(otherSocket.closed).toBeNull();
    expect(agentSocket.closed).toBeNull();
  });

  it("a visibility change asks every watcher to reconnect", async () => {
    const t = await team("public");
    const socket = await subscribed(t.app.slug, agentProtocols(t.key));
    await json(await call(t.path, { method: "PATCH", key: t.key, json: { visibility: "link" } }), 200);
    expect((await socket.whenClosed()).code).toBe(1012);
  });

  it("rotating the share link asks every watcher to reconnect", async () => {
    const t = await team("link");
    const socket = await subscribed(t.app.slug, agentProtocols(t.key));
    await json(await call(`${t.path}/share-link/rotate`, { method: "POST", key: t.key, json: {} }), 200);
    expect((await socket.whenClosed()).code).toBe(1012);
  });
});
