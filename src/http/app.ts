/**
 * The API origin's Hono app: mounts every route module, renders every failure as the
 * catalogue envelope, and answers unknown paths with 404 `not_found` and known paths
 * under the wrong verb with 405 `method_not_allowed` plus `Allow`.
 */
import { Hono } from "hono";
import { relayRouter } from "./router";
import { HTTPException } from "hono/http-exception";
import { RelayError, errorBody } from "../errors";
import { config } from "../config";
import { allowedMethods } from "./routes";
import type { AppContext, AppEnv } from "./types";
import { cliVersionGate } from "./middleware/cli-version";
import { registerRoutes } from "./v1/register";
import { deviceRoutes } from "./v1/device";
import { agentRoutes } from "./v1/agents";
import { humanAuthRoutes } from "./v1/human-auth";
import { idpAuthRoutes } from "./v1/idp-auth";
import { selfRoutes } from "./v1/self";
import { selfAppRoutes } from "./v1/self-apps";
import { selfAccountRoutes } from "./v1/self-account";
import { deployRoutes } from "./v1/deploy";
import { appTypesRoutes } from "./v1/app-types";
import { appArchiveRoutes } from "./v1/app-archive";
import { appRoutes } from "./v1/apps";
import { appReviewRoutes } from "./v1/app-review";
import { rowRoutes } from "./v1/rows";
import { feedRoutes } from "./v1/feed";
import { credentialRoutes } from "./v1/credentials";
import { grantRoutes } from "./v1/grants";
import { memberRoutes } from "./v1/members";
import { connectionRoutes } from "./v1/connections";
import { transferRoutes } from "./v1/transfer";
import { orgRoutes } from "./v1/orgs";
import { appTokenRoutes } from "./v1/app-tokens";
import { docsRoutes } from "./docs";
import { rowWriteActivity } from "../apps/activity";
import { webhookRoutes } from "./v1/webhooks";
import { ingestRoutes } from "./v1/ingest";
import { ingestHookRoutes } from "./v1/ingest-hooks";
import { agentTaskRoutes } from "./v1/agent-tasks";
import { agentTaskStreamRoutes } from "./v1/agent-task-stream";
import { attachmentRoutes } from "./v1/attachments";
import { devMailRoutes } from "./dev/mail";
import { devCronRoutes } from "./dev/cron";
import { skillRoutes } from "./skill";
import { tasteRoutes } from "./v1/taste";
import { feedbackRoutes } from "./v1/feedback";
import { publisherRoutes } from "./v1/publisher";
import { communityRoutes } from "./v1/community";
import { communityUseRoutes } from "./v1/community-use";
import { consoleRoutes } from "./console/routes";
import { mcpRoutes } from "../mcp/endpoint";
import { refuseUnsafeUrlText } from "./middleware/url-text";
import { withoutBoundValues } from "../db/query-errors";

export function renderError(c: AppContext, err: RelayError): Response {
  const res = c.json(errorBody(err, config(c.env).apiOrigin), err.status as 400);
  for (const [name, value] of Object.entries(err.headers ?? {})) res.headers.set(name, value);
  return res;
}

function toRelayError(err: unknown): RelayError {
  if (err instanceof RelayError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return new RelayError("payload_too_large", err.message || undefined);
    if (err.status >= 400 && err.status < 500) return new RelayError("invalid_request", err.message || undefined);
  }
  return new RelayError("internal_error");
}

export function buildApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>({ router: relayRouter() });
  app.use("/v1/*", refuseUnsafeUrlText);
  app.use("/v1/*", cliVersionGate);
  app.use("/v1/apps/:id/collections/*", rowWriteActivity((c) => c.req.param("id")));

  registerRoutes(app);
  deviceRoutes(app);
  agentRoutes(app);
  humanAuthRoutes(app);
  idpAuthRoutes(app);
  selfRoutes(app);
  selfAppRoutes(app); // /v1/self/apps/recent and /deleted before /v1/self/apps/:appId/*
  selfAccountRoutes(app);
  appReviewRoutes(app); // before appRoutes: /v1/apps/advisories must win over /v1/apps/:id
  deployRoutes(app);
  appTypesRoutes(app);
  appArchiveRoutes(app); // export and import (src/apps/archive)
  appRoutes(app);
  rowRoutes(app);
  webhookRoutes(app);
  ingestRoutes(app);
  ingestHookRoutes(app);
  agentTaskStreamRoutes(app); // before agentTaskRoutes: /v1/agent-tasks/stream is not a task id
  agentTaskRoutes(app);
  attachmentRoutes(app);
  feedRoutes(app);
  credentialRoutes(app);
  grantRoutes(app);
  memberRoutes(app);
  connectionRoutes(app);
  transferRoutes(app);
  orgRoutes(app);
  appTokenRoutes(app);
  tasteRoutes(app);
  feedbackRoutes(app);
  publisherRoutes(app);
  communityRoutes(app);
  communityUseRoutes(app);
  docsRoutes(app);
  devMailRoutes(app);
  devCronRoutes(app);
  skillRoutes(app);
  mcpRoutes(app); // /mcp and its protected-resource metadata; its tools call the routes above in process
  consoleRoutes(app);

  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    const allow = allowedMethods(path);
    if (allow.length > 0) {
      return renderError(c, new RelayError("method_not_allowed", `${c.req.method} is not supported on ${path}; use ${allow.join(", ")}.`,
        { method: c.req.method, allow }, { Allow: allow.join(", ") }));
    }
    return renderError(c, new RelayError("not_found", `Nothing exists at ${path}.`, { path }));
  });

  app.onError((err, c) => {
    const relayError = toRelayError(err);
    if (relayError.code === "internal_error") console.error("unhandled error", withoutBoundValues(err));
    return renderError(c as AppContext, relayError);
  });
  return app;
}
