// Identity-provider sign-in in real Chromium against the local relay, which the node
// project's global setup points at a fake OpenID issuer on 127.0.0.1 (IDP_NAME "Fake IdP";
// test/support/fake-oidc-issuer.ts). A person sent to sign in from a console page clicks
// "Sign in with Fake IdP", signs in on the issuer's page and lands back on that page,
// signed in as the address the issuer vouched for; the same address by magic link is the
// same account. An address the issuer did not verify, or a "Deny", lands on the sign-in
// page saying why, not signed in.
import { describe, expect, inject, it } from "vitest";
import type { Page } from "playwright-core";
import { api, relayUrl, signInHere, uniqueEmail, useBrowser } from "./support";

const { newPage } = useBrowser();
const issuer = inject("oidcIssuerUrl");

/** From a console page that needs a session, through the sign-in page, to the issuer's login page. */
async function toIssuer(page: Page, from: string): Promise<void> {
  await page.goto(`${relayUrl}${from}`);
  await page.waitForURL((url) => url.origin === relayUrl && url.pathname === "/signin");
  await page.getByRole("link", { name: "Sign in with Fake IdP" }).click();
  await page.waitForURL((url) => url.origin === issuer && url.pathname === "/authorize");
}

describe("sign-in with an identity provider in Chromium", () => {
  it("the status says idp: true", async () => {
    expect((await api("/v1/auth/status")).body).toEqual({ magic_link: true, idp: true });
  });

  it("signs in through the issuer from the sign-in page and lands back where the person was going", async () => {
    const email = uniqueEmail("idp-browser");
    const page = await newPage([issuer]);
    await toIssuer(page, "/console/account");
    await page.locator("#issuer-email").fill(email);
    await page.locator("#issuer-sign-in").click();
    await page.waitForURL((url) => url.origin === relayUrl && url.pathname === "/console/account");
    await expect.poll(() => page.locator("#signed-in-as").textContent()).toBe(email);

    // The same address through an emailed link is the same account, in a fresh browser.
    const other = await newPage();
    await other.goto(`${relayUrl}/console/account`);
    await signInHere(other, email);
    await expect.poll(() => other.locator("#signed-in-as").textContent()).toBe(email);
  });

  it("an address the issuer did not verify is refused on the sign-in page, and nobody is signed in", async () => {
    const page = await newPage([issuer]);
    await toIssuer(page, "/console/account");
    await page.locator("#issuer-email").fill(uniqueEmail("idp-unverified"));
    await page.locator("#issuer-verified").uncheck();
    await page.locator("#issuer-sign-in").click();
    await page.waitForURL((url) => url.origin === relayUrl && url.pathname === "/signin" && url.searchParams.get("error") === "email_not_verified");
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("did not confirm your email address");
    expect(await page.locator("#signed-in-as").count()).toBe(0);
    expect((await page.context().cookies(relayUrl)).map((cookie) => cookie.name)).not.toContain("relay_session");
    // The sign-in page still offers both ways, and keeps where the person was going.
    expect(await page.getByRole("link", { name: "Sign in with Fake IdP" }).getAttribute("href")).toBe(`/v1/auth/idp?return_to=${encodeURIComponent("/console/account")}`);
  });

  it("declining at the issuer says so on the sign-in page", async () => {
    const page = await newPage([issuer]);
    await toIssuer(page, "/console/account");
    await page.locator("#issuer-deny").click();
    await page.waitForURL((url) => url.origin === relayUrl && url.pathname === "/signin" && url.searchParams.get("error") === "idp_access_denied");
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("declined");
    expect(await page.locator("#signed-in-as").count()).toBe(0);
  });
});
