/**
 * `GET /v1/agent-tasks/stream` on the API origin: the task-worker wake socket (WIRE §3.2).
 * The agent key rides in the `service.agentkey.<key>` subprotocol token beside
 * `service.v1`; it is checked here like any agent key (401 `invalid_api_key` for one that
 * does not hold), and an agent nobody claimed has no apps to be woken for (403
 * `agent_not_claimed`). The upgrade then goes to the owner's TaskWake object
 * (durable-objects/task-wake/) with only who connected: nothing the client sent is
 * forwarded. The answer selects `service.v1`, never the token that carries the key.
 */
import type { Hono } from "hono";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { RelayError } from "../../errors";
import { agentKeyOf, agentPrincipal, heldAgentKey, lookupAgentKey } from "../../auth/agent-key";
import { credentialsFromProtocols } from "../serve/caller";
import { errors } from "./schemas";
import { taskWake, wakeUpgrade } from "../../../durable-objects/task-wake/contract";

export function agentTaskStreamRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/agent-tasks/stream", tag: "agent-tasks", auth: "none",
    summary: "The task-worker wake socket (WebSocket; subprotocols service.v1 and service.agentkey.<key>): hello { push }, then ready { credits } from the worker; agent-task.available and agent-task.assign frames",
    responses: { 101: { description: "Switching to the wake socket" }, ...errors(400, 401, 403) },
  }, async (c) => {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
      throw new RelayError("invalid_request", "/v1/agent-tasks/stream is the task-worker wake socket: open it as a WebSocket offering service.v1 and service.agentkey.<key>.", { path: "/v1/agent-tasks/stream" });
    }
    const { v1, creds } = credentialsFromProtocols(c.req.header("sec-websocket-protocol"));
    if (!v1) throw new RelayError("invalid_request", "Offer the subprotocol service.v1 (the agent key rides in service.agentkey.<key>).", { field: "sec-websocket-protocol" });
    const agent = agentPrincipal(heldAgentKey((await lookupAgentKey(c.env, agentKeyOf(creds.agentKey ?? null), undefined, null)).found));
    if (agent.ownerHumanId === null) throw new RelayError("agent_not_claimed", "An agent nobody has claimed owns no apps, so it has no tasks to be woken for.");
    return taskWake(c.env, agent.ownerHumanId).fetch(wakeUpgrade({ ownerHumanId: agent.ownerHumanId, agentId: agent.agentId, keyId: agent.keyId }));
  });
}
