/**
 * The one page frame every console page shares: landmarks (header, main, footer), a skip
 * link, a visible focus ring and a few lines of inline CSS, so each page only writes its
 * own content. Pages work without JavaScript; nothing here ships a script.
 */
import type { Child, FC } from "hono/jsx";

const css = `
:root { color-scheme: light dark; --fg: #1b1b1f; --bg: #fdfdfc; --muted: #5c5f66; --line: #d5d7dc;
  --accent: #1d4ed8; --ok: #166534; --okbg: #dcfce7; --bad: #991b1b; --badbg: #fee2e2; --focus: #f59e0b; }
@media (prefers-color-scheme: dark) { :root { --fg: #ececef; --bg: #16171a; --muted: #a1a4ab; --line: #34363c;
  --accent: #93b4ff; --ok: #bbf7d0; --okbg: #14391f; --bad: #fecaca; --badbg: #4a1414; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header, main, footer { max-width: 60rem; margin: 0 auto; padding: 1rem; }
header { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; justify-content: space-between; border-bottom: 1px solid var(--line); }
header .brand { font-weight: 700; color: inherit; text-decoration: none; }
header form { display: inline; }
footer { color: var(--muted); font-size: .875rem; border-top: 1px solid var(--line); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .5rem; }
.vh { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
button, input { font: inherit; }
button { padding: .4rem .9rem; border: 1px solid var(--line); border-radius: .4rem; background: var(--bg); color: var(--fg); cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--bg); }
button.danger { border-color: var(--bad); color: var(--bad); }
a.button { display: inline-block; padding: .4rem .9rem; border: 1px solid var(--line); border-radius: .4rem; text-decoration: none; }
a.button.primary { background: var(--accent); border-color: var(--accent); color: var(--bg); }
a.danger { color: var(--bad); }
input[type=email], input[type=text] { padding: .4rem .6rem; border: 1px solid var(--muted); border-radius: .4rem; min-width: 16rem; background: var(--bg); color: var(--fg); }
input.wide { width: 100%; }
label { display: block; font-weight: 600; margin-bottom: .25rem; }
.field { margin: 1rem 0; }
.flash, .error, .note { padding: .75rem 1rem; border-radius: .4rem; margin: 1rem 0; }
.flash { background: var(--okbg); color: var(--ok); }
.error { background: var(--badbg); color: var(--bad); }
.note { border: 1px dashed var(--line); }
.muted { color: var(--muted); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td form { display: inline-block; margin: 0 .25rem .25rem 0; }
code.secret { font-size: 1.25rem; padding: .25rem .5rem; border: 1px solid var(--line); border-radius: .3rem; user-select: all; }
pre { padding: .75rem; border: 1px solid var(--line); border-radius: .4rem; overflow-x: auto; }
.actions { display: flex; gap: .75rem; flex-wrap: wrap; align-items: center; }
nav.main a { margin-right: .75rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1.5rem; margin: 1rem 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
fieldset { border: 1px solid var(--line); border-radius: .4rem; margin: 1rem 0; }
.choice { margin: .35rem 0; }
.choice label { display: inline; font-weight: normal; }
.spaced { margin-top: 1.5rem; }
code.data { font-size: .85rem; overflow-wrap: anywhere; white-space: pre-wrap; }
dl.row-data { display: grid; grid-template-columns: max-content 1fr; gap: 0 .75rem; margin: 0; }
dl.row-data dt { color: var(--muted); }
dl.row-data dd { margin: 0; overflow-wrap: anywhere; }
td time { white-space: nowrap; }
dl.row-data code { font-size: .9em; }
@media (max-width: 40rem) {
  table.records thead { display: none; }
  table.records tr, table.records th, table.records td { display: block; border: 0; padding: .15rem 0; }
  table.records tr { border-bottom: 1px solid var(--line); padding: .5rem 0; }
  table.records td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
}
table.narrow { width: auto; }
table.narrow td { text-align: right; padding-left: 2rem; }
.pager { margin: 1rem 0; }
`;

export interface LayoutProps {
  title: string;
  /** The signed-in human's email, shown with a sign-out button; null when signed out. */
  signedInAs: string | null;
  /** Whether the signed-in human is a community operator (the review queue is in their navigation). */
  operator?: boolean;
  children?: Child;
}

export const Layout: FC<LayoutProps> = ({ title, signedInAs, operator, children }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${title} · the relay`}</title>
      <style dangerouslySetInnerHTML={{ __html: css }} />
    </head>
    <body>
      <a class="skip" href="#main">Skip to content</a>
      <header>
        <a class="brand" href="/">the relay</a>
        {signedInAs ? (
          <nav aria-label="Console" class="main">
            <a href="/">Agents</a>
            <a href="/console/apps" id="nav-apps">Apps</a>
            <a href="/console/gallery" id="nav-gallery">Gallery</a>
            <a href="/console/publisher" id="nav-publisher">Publisher</a>
            {operator ? <a href="/console/review" id="nav-review">Review queue</a> : null}
            <a href="/console/account" id="nav-account">Account</a>
          </nav>
        ) : <nav aria-label="Console" class="main"><a href="/console/gallery" id="nav-gallery">Gallery</a></nav>}
        {signedInAs ? (
          <nav aria-label="Account">
            <span class="muted">Signed in as <span id="signed-in-as">{signedInAs}</span></span>{" "}
            <form method="post" action="/console/logout">
              <button type="submit" id="sign-out">Sign out</button>
            </form>
          </nav>
        ) : null}
      </header>
      <main id="main" tabindex={-1}>
        <h1>{title}</h1>
        {children}
      </main>
      <footer>
        <a href="/docs/errors">Error codes</a> · <a href="/v1/openapi.json">API description</a> · Agents talk to this relay with the <code>service</code> command.
      </footer>
    </body>
  </html>
);

/** A success message carried across a redirect (Post/Redirect/Get). */
export const Flash: FC<{ text: string | null }> = ({ text }) =>
  text ? <p class="flash" role="status" id="flash">{text}</p> : null;

/** An error message shown above a form. */
export const Alert: FC<{ text: string | null }> = ({ text }) =>
  text ? <p class="error" role="alert" id="form-error">{text}</p> : null;

/** A timestamp readable by people and machines; "never" for null. */
export const When: FC<{ iso: string | null }> = ({ iso }) =>
  iso ? <time datetime={iso}>{`${iso.slice(0, 16).replace("T", " ")} UTC`}</time> : <span class="muted">never</span>;

/** A size in bytes, in the unit that reads best. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
