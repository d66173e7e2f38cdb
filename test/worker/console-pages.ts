// Requests the console tests make the way a browser without JavaScript does: GET a page
// (signed in or not) and expect HTML with a status, POST a urlencoded form with the
// session cookie (and the same-origin header the helpers add for a session).
import { expect } from "vitest";
import { call } from "./helpers";

export function urlencoded(fields: Array<[string, string]>): { body: string; contentType: string } {
  return { body: new URLSearchParams(fields).toString(), contentType: "application/x-www-form-urlencoded" };
}

/** The page's HTML, after checking its status and that it is HTML; signed out when `session` is undefined. */
export async function htmlPage(path: string, session: string | undefined, status = 200): Promise<string> {
  const res = await call(path, session === undefined ? {} : { session });
  const html = await res.text();
  expect(res.status, html.slice(0, 2000)).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^text\/html/);
  return html;
}

export function postForm(path: string, session: string, fields: Array<[string, string]> = []): Promise<Response> {
  return call(path, { method: "POST", session, ...urlencoded(fields) });
}
