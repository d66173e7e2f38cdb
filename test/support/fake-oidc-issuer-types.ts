/**
 * The fake OpenID issuer's client registration and the name under which its issuer URLs
 * are provided to the worker tests: shared by the Node side that runs it
 * (fake-oidc-issuer-setup.ts) and the workerd side that reads it, so it imports nothing
 * from either runtime.
 */
export const FAKE_IDP_CLIENT_ID = "relay-idp-test-client";
export const FAKE_IDP_CLIENT_SECRET = "fake-issuer-client-secret-0123456789";

declare module "vitest" {
  export interface ProvidedContext {
    /** `{ issuer, brokenIssuer }` of the fake issuer on 127.0.0.1. */
    oidcIssuer: { issuer: string; brokenIssuer: string };
  }
}
