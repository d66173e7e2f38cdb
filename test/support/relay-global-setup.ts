// Starts one real relay (`wrangler dev`, development mode, fresh local state) on a free
// loopback port for the CLI and browser tests, and stops it after the run.
// Tests read its URL with `inject("relayUrl")`. A loopback stand-in for Turnstile's
// script (turnstile-stand-in.ts) runs beside it and the relay's TURNSTILE_SCRIPT_URL names
// it, so app pages with an antiAbuse collection never reach the network; tests read its
// URL with `inject("turnstileScriptUrl")`. A fake OpenID issuer (fake-oidc-issuer.ts) runs
// beside them too and the relay's IDP_* settings name it, so the sign-in page offers
// "Sign in with Fake IdP"; tests read its issuer URL with `inject("oidcIssuerUrl")`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error plain ESM helper shared with `npm start`
import { startRelay } from "../../scripts/relay-process.mjs";
import { startTurnstileStandIn } from "./turnstile-stand-in";
import { startFakeOidcIssuer } from "./fake-oidc-issuer";
import { FAKE_IDP_CLIENT_ID, FAKE_IDP_CLIENT_SECRET } from "./fake-oidc-issuer-types";
import { COMMUNITY_OPERATOR_EMAIL } from "./community-operator";

declare module "vitest" {
  export interface ProvidedContext {
    relayUrl: string;
    turnstileScriptUrl: string;
    oidcIssuerUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const persistTo = mkdtempSync(path.join(tmpdir(), "relay-test-"));
  const turnstile = await startTurnstileStandIn();
  const issuer = await startFakeOidcIssuer({ clientId: FAKE_IDP_CLIENT_ID, clientSecret: FAKE_IDP_CLIENT_SECRET });
  // The CLI's processes all call from 127.0.0.1, so the per-address invitation limiter
  // (tested on its own in the worker project) would trip across the CLI test files.
  // COMMUNITY_OPERATOR_EMAIL's human is the community review operator (test/cli/community-publish.test.ts).
  const vars = {
    COMMUNITY_REVIEW_OPERATOR_EMAILS: COMMUNITY_OPERATOR_EMAIL,
    MIN_CLI_VERSION: "0.1.0", TURNSTILE_SCRIPT_URL: turnstile.url, RATE_LIMIT_INVITE: "10000",
    IDP_ISSUER: issuer.issuer, IDP_CLIENT_ID: FAKE_IDP_CLIENT_ID, IDP_CLIENT_SECRET: FAKE_IDP_CLIENT_SECRET, IDP_NAME: "Fake IdP",
  };
  const relay = await startRelay({ persistTo, vars }).catch(async (err: unknown) => {
    await Promise.all([turnstile.close(), issuer.close()]);
    throw err;
  });
  project.provide("relayUrl", relay.url);
  project.provide("turnstileScriptUrl", turnstile.url);
  project.provide("oidcIssuerUrl", issuer.issuer);
  return () => {
    relay.stop();
    void turnstile.close();
    void issuer.close();
    rmSync(persistTo, { recursive: true, force: true });
  };
}
