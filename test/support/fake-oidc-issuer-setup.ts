// The worker projects' global setup for identity-provider sign-in: the fake OpenID issuer
// (fake-oidc-issuer.ts) on 127.0.0.1, its issuer URLs handed to the tests as
// `inject("oidcIssuer")`. The relay under test is pointed at it per request (IDP_* env).
import type { TestProject } from "vitest/node";
import { startFakeOidcIssuer } from "./fake-oidc-issuer";
import { FAKE_IDP_CLIENT_ID, FAKE_IDP_CLIENT_SECRET } from "./fake-oidc-issuer-types";

export default async function setup(project: TestProject) {
  const issuer = await startFakeOidcIssuer({ clientId: FAKE_IDP_CLIENT_ID, clientSecret: FAKE_IDP_CLIENT_SECRET });
  project.provide("oidcIssuer", { issuer: issuer.issuer, brokenIssuer: issuer.brokenIssuer });
  return () => issuer.close();
}
