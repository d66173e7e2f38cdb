// The socket hand-off through the contract: the store answers an upgrade it refuses with
// the failure itself (which the Worker throws as its catalogue error), never a bare status,
// and accepts a well-formed one with the upgrade.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { appStoreFetcher, socketRefusal, socketUpgrade, SOCKET_PROTOCOL, type SocketHandoff } from "../contract";
import { setup } from "../../../test/worker/rows/fixtures";

const hello: SocketHandoff["hello"] = {
  app: { slug: "x", name: "X", description: null, icon: null, visibility: "private", collections: [] },
  session: { kind: "owner", humanId: "h", visitorId: null },
  auth: { authorize_url: "http://localhost:8787/authorize?app=x" },
};

describe("the socket hand-off", () => {
  it("a version the app never had is refused as app_not_found; a request that is no forwarded upgrade as invalid_request", async () => {
    const ctx = await setup();
    const store = appStoreFetcher(env.APP_STORE, ctx.appId);
    const unknownVersion = await store.fetch(socketUpgrade({ appId: ctx.appId, version: 99, principal: { kind: "owner", humanId: "h" }, hello }));
    expect(await socketRefusal(unknownVersion)).toEqual({ code: "app_not_found", message: "This app has no such version." });
    const plain = await store.fetch(new Request("https://app-store.internal/_svc/ws"));
    expect(await socketRefusal(plain)).toMatchObject({ code: "invalid_request" });
  });

  it("a well-formed hand-off is accepted with the upgrade and the relay's subprotocol", async () => {
    const ctx = await setup();
    const answer = await appStoreFetcher(env.APP_STORE, ctx.appId).fetch(socketUpgrade({ appId: ctx.appId, version: 1, principal: { kind: "owner", humanId: "h" }, hello }));
    expect(await socketRefusal(answer)).toBeNull();
    expect(answer.headers.get("Sec-WebSocket-Protocol")).toBe(SOCKET_PROTOCOL);
    const socket = answer.webSocket!;
    socket.accept();
    socket.close(1000, "done");
  });
});
