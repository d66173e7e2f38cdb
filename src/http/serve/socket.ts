/**
 * `GET /_svc/ws` on an app origin: the app feed socket (WIRE §3.1). The Worker only
 * decides who is connecting — credentials ride in `Sec-WebSocket-Protocol` tokens beside
 * `service.v1` (src/auth/page-caller.ts lists them) — and whether the app can be watched at all: a
 * dormant app gets `_dormant`, a suspended one `_suspended`, an archived one an `error`
 * frame, each followed by a close. Everything else happens in the app's AppStore
 * (durable-objects/app-store/watchers.ts), which gets a fresh request carrying only the
 * upgrade and the resolved principal (contract.ts `socketUpgrade`): nothing a client sent
 * is forwarded, so a client can never speak that hand-off to the store itself. A store
 * that refuses the upgrade answers why, and the caller gets that catalogue error. The answer
 * always selects `service.v1` — never a token that carries a credential. The hand-off
 * also says when the presented credential expires and which preview token (if any) let
 * the caller in, so the store can close the socket when that access ends, and when the
 * access reads began, so the store can turn away a socket whose access was withdrawn
 * while it was being checked.
 */
import type { Hono } from "hono";
import { RelayError } from "../../errors";
import { config } from "../../config";
import { authorizeUrl } from "../../apps/urls";
import {
  appStoreFetcher, errorOf, socketRefusal, socketUpgrade, SOCKET_PROTOCOL, type HelloFacts, type SocketHandoff,
} from "../../../durable-objects/app-store/contract";
import { assertSameOrigin, clientIp, credentialsFromHeaders, credentialsFromProtocols, resolveCaller } from "./caller";
import type { ServeContext, ServeEnv } from "./context";

/** Accepts the socket here, sends one terminal frame and closes: the app cannot be watched. */
function terminal(frame: Record<string, unknown>): Response {
  const [client, server] = Object.values(new WebSocketPair());
  server.accept();
  server.send(JSON.stringify(frame));
  server.close(1000, String(frame.type));
  return new Response(null, { status: 101, webSocket: client, headers: { "Sec-WebSocket-Protocol": SOCKET_PROTOCOL } });
}

async function openSocket(c: ServeContext): Promise<Response> {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new RelayError("invalid_request", "/_svc/ws is the app feed socket: open it as a WebSocket offering the subprotocol service.v1.", { path: "/_svc/ws" });
  }
  const served = c.get("served");
  assertSameOrigin(c, served);
  const { v1, creds } = credentialsFromProtocols(c.req.header("sec-websocket-protocol"));
  if (!v1) throw new RelayError("invalid_request", "Offer the subprotocol service.v1 (credentials ride in further subprotocol tokens).", { field: "sec-websocket-protocol" });
  // Clients that can set headers may send the same credentials the HTTP paths take.
  const fromHeaders = credentialsFromHeaders(c);
  const live = await served.live();
  const caller = await resolveCaller(c.env, served, live.policy, { ...fromHeaders, ...creds }, clientIp(c));

  const app = served.app;
  if (app.status === "dormant") return terminal({ type: "_dormant" });
  if (app.status === "suspended") return terminal({ type: "_suspended" });
  if (app.status === "archived") return terminal({ type: "error", error: { code: "gone", message: "This app is archived." } });

  const hello: HelloFacts = {
    app: {
      slug: served.slug,
      name: live.policy.app.name,
      description: live.policy.app.description,
      icon: live.policy.app.icon,
      visibility: app.visibility,
      collections: live.policy.collections.map(({ name, appendOnly }) => ({ name, appendOnly })),
    },
    session: caller.session,
    auth: { authorize_url: authorizeUrl(config(c.env), served.slug) },
  };
  const handoff: SocketHandoff = {
    appId: app.id, version: app.currentVersion!, principal: caller.principal, hello, checkedAt: served.checkedAt,
    ...(caller.expiresAt ? { expiresAt: Date.parse(caller.expiresAt) } : {}),
    ...(caller.previewTokenId ? { previewTokenId: caller.previewTokenId } : {}),
  };
  const answer = await appStoreFetcher(c.env.APP_STORE, app.id).fetch(socketUpgrade(handoff));
  const refused = await socketRefusal(answer);
  if (refused) throw errorOf(refused);
  return answer;
}

export function socketRoutes(app: Hono<ServeEnv>): void {
  app.get("/_svc/ws", openSocket);
}
