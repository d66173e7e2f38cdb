/**
 * The gate shell: what a private or link app answers to a plain page request. The server
 * cannot see the `#k=` fragment and app origins have no cookies, so the credential is
 * found in the browser by the shell's script (src/page-script/gate.ts), which then
 * fetches the real document with it in a header and replaces this page. The shell holds
 * no app content: only the app's name, the slug and where to sign in.
 *
 * It carries the document's own security headers (CSP, Permissions-Policy,
 * Referrer-Policy): document.open() keeps the shell's policies, so they must already be
 * the app's. See docs/decisions/2026-11-22-app-origins.md for what that discloses.
 */
import { config } from "../../config";
import { GATE_SOURCE } from "../../page-script/bundle.generated";
import type { ServedApp, ServedPolicy } from "./context";
import { bootConfig } from "./inject";
import { escapeHtml, jsonAttribute } from "./html";
import { documentHeaders } from "./policy";

const css = "body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1b1b1f}"
  + "@media (prefers-color-scheme:dark){body{color:#ececef;background:#16171a}}"
  + "button{font:inherit;padding:.5rem 1rem;border-radius:.4rem;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;cursor:pointer}"
  + ":focus-visible{outline:3px solid #f59e0b;outline-offset:2px}.muted{opacity:.8}";

export function gateShell(served: ServedApp, policy: ServedPolicy, env: object): Response {
  const { challenge: _challenge, ...cfg } = bootConfig(served, policy, config(env).apiOrigin);
  // The shell tells nothing but the name: no description, icon, challenged collections or
  // other manifest facts (the document it opens carries its own boot config).
  const shellConfig = { ...cfg, description: null, icon: null };
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><title>${escapeHtml(policy.app.name)}</title><style>${css}</style></head>
<body><main id="svc-gate" data-visibility="${served.app.visibility}" data-svc="${jsonAttribute(shellConfig)}" aria-live="polite">
<p id="svc-gate-loading">Opening ${escapeHtml(policy.app.name)}…</p>
<noscript><p>This app needs JavaScript to check your access.</p></noscript>
</main><script>${GATE_SOURCE}</script></body></html>
`;
  return new Response(body, {
    status: 200,
    headers: { ...documentHeaders(served, policy), "Cache-Control": "no-store", Vary: "Authorization, X-Service-Share" },
  });
}
