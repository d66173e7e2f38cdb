/**
 * Mounts the owner console: server-rendered HTML pages on the API origin that work
 * without JavaScript. Each page module declares its routes through `route`, which
 * records them in the route registry (so the relay knows their verbs) and wraps them so
 * failures, CSRF refusals and wrong verbs answer as HTML pages, not JSON.
 */
import type { Hono } from "hono";
import type { AppContext, AppEnv } from "../types";
import { notePageRoute, type Method } from "../routes";
import { methodNotAllowed, page } from "./page";
import { signInPages } from "./signin";
import { homePages } from "./home";
import { claimCodePages } from "./claim-code";
import { devicePages } from "./device";
import { authorizePages } from "./authorize";
import { mcpAuthorizePages } from "./mcp-authorize";
import { mcpClientPages } from "./mcp-clients";
import { appsListPages } from "./apps-list";
import { appOverviewPages } from "./app-overview";
import { appSettingsPages } from "./app-settings";
import { appRowsPages } from "./app-rows";
import { appFeedPages } from "./app-feed";
import { appTasksPages } from "./app-tasks";
import { appTrashPages } from "./app-trash";
import { appMembersPages } from "./app-members";
import { appAccessPages } from "./app-access";
import { invitePages } from "./invite";
import { transferPages } from "./transfer";
import { accountPages } from "./account";
import { accountDeletePages } from "./account-delete";
import { galleryPages } from "./gallery";
import { reviewPages } from "./review";
import { publisherPages } from "./publisher";

export type PageRoute = (method: Method, path: string, handler: (c: AppContext) => Response | Promise<Response>) => void;

export function consoleRoutes(app: Hono<AppEnv>): void {
  const paths = new Set<string>();
  const route: PageRoute = (method, path, handler) => {
    notePageRoute(method, path);
    app.on(method.toUpperCase(), path, page(handler));
    paths.add(path);
  };
  signInPages(route);
  homePages(route);
  claimCodePages(route);
  devicePages(route);
  authorizePages(route);
  mcpAuthorizePages(route);
  mcpClientPages(route);
  appsListPages(route);
  appOverviewPages(route);
  appSettingsPages(route);
  appRowsPages(route);
  appFeedPages(route);
  appTasksPages(route);
  appTrashPages(route);
  appMembersPages(route);
  appAccessPages(route);
  invitePages(route);
  transferPages(route);
  accountPages(route);
  accountDeletePages(route);
  galleryPages(route);
  reviewPages(route);
  publisherPages(route);
  // Registered after every real handler, so only the verbs a path lacks land here.
  for (const path of paths) app.all(path, methodNotAllowed);
}
