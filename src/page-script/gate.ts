/**
 * The gate shell's script, served on a private or link app's own origin in place of the
 * document. The server cannot see the URL fragment and app origins have no cookies, so
 * this script gathers the visitor's credential in the browser — the `#k=` share token (or
 * the share pass remembered from an earlier visit), the app-session token in localStorage,
 * or a one-time `#svc_grant=` from /authorize that it trades for an app session, or a grant
 * link's `#g=` that it trades for a holder credential (`POST /_svc/grant`) — fetches
 * the real document with it in a header and replaces this page with the answer. With no
 * usable credential it shows the gate: a sign-in button (private) or "this link is not
 * valid" (link).
 */
import { GRANT_KEY, SESSION_KEY, SHARE_KEY, authorizeUrl, credentialHeaders, exchangeGrant, exchangeGrantLink, readStored, takeFragment, writeStored } from "./common";
import type { BootConfig } from "./types";

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string>, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function showGate(root: HTMLElement, config: BootConfig, problem: "signin" | "link" | "expired" | "error"): void {
  root.replaceChildren();
  root.append(el("h1", {}, config.name));
  const signIn = el("button", { type: "button", id: "svc-sign-in" }, "Sign in");
  signIn.addEventListener("click", () => window.location.assign(authorizeUrl(config.authorize, config.slug)));
  if (problem === "link") {
    root.dataset.gate = "link-invalid";
    root.append(el("p", { id: "svc-gate-message", role: "alert" }, "This link is not valid (it may have been rotated). Ask whoever shared it with you for a new one."));
    const owner = el("p", { class: "muted" }, "Is this your app? ");
    signIn.textContent = "Sign in as the owner";
    owner.append(signIn);
    root.append(owner);
    return;
  }
  root.dataset.gate = problem === "error" ? "error" : "signin";
  const message = problem === "expired"
    ? "That sign-in did not finish (it may have expired). Sign in again to open this app."
    : problem === "error"
      ? "The app could not be loaded. Check your connection and reload the page."
      : "This app is private. Sign in to open it.";
  root.append(el("p", { id: "svc-gate-message", role: problem === "signin" ? "status" : "alert" }, message));
  root.append(el("p", {}), signIn);
}

async function open(): Promise<void> {
  const root = document.getElementById("svc-gate");
  if (!root) return;
  let config: BootConfig;
  try {
    config = JSON.parse(root.getAttribute("data-svc") ?? "") as BootConfig;
  } catch {
    return;
  }
  const fragment = takeFragment(["k", "svc_grant", "g"]);
  if (fragment.k) writeStored(SHARE_KEY, fragment.k);
  let grantFailed = false;
  if (fragment.svc_grant) {
    try {
      await exchangeGrant(fragment.svc_grant);
    } catch {
      grantFailed = true;
    }
  }
  if (fragment.g) {
    try {
      await exchangeGrantLink(fragment.g);
    } catch {
      // Revoked, expired or spent: a remembered credential (if any) is tried below.
    }
  }

  const headers = credentialHeaders();
  if (Object.keys(headers).length > 0) {
    let res: Response;
    try {
      res = await fetch(window.location.pathname + window.location.search, { headers, credentials: "omit", cache: "no-store" });
    } catch {
      showGate(root, config, "error");
      return;
    }
    if (res.ok && (res.headers.get("content-type") ?? "").startsWith("text/html")) {
      const html = await res.text();
      document.open();
      document.write(html);
      document.close();
      return;
    }
    if (res.status === 401) {
      // Neither credential opens the app any more (rotated link, expired or revoked session).
      if (headers.authorization === `Bearer ${readStored(SESSION_KEY)}`) writeStored(SESSION_KEY, null);
      else if (headers.authorization) writeStored(GRANT_KEY, null);
      if (headers["x-service-share"]) writeStored(SHARE_KEY, null);
    } else {
      showGate(root, config, "error");
      return;
    }
  }
  if (grantFailed) showGate(root, config, "expired");
  else showGate(root, config, config.visibility === "link" ? "link" : "signin");
}

void open();
// Pasting a fresh link into this tab changes only the fragment, which reloads nothing:
// look again whenever it changes.
window.addEventListener("hashchange", () => void open());
