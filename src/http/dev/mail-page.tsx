/**
 * The development outbox as a page a person can read: newest first, each message's
 * recipient, subject and time, its text with every link clickable, and a filter by
 * recipient. The text is shown, not the message's HTML part, so nothing in a mail runs.
 */
import type { Child, FC } from "hono/jsx";
import type { DevMailView } from "./mail";

const css = `
:root { color-scheme: light dark; }
body { margin: 0 auto; max-width: 60rem; padding: 1rem; font: 16px/1.5 system-ui, sans-serif; }
article { border: 1px solid #8884; border-radius: .5rem; padding: .75rem 1rem; margin: 1rem 0; }
article h2 { font-size: 1.1rem; margin: 0 0 .25rem; }
.meta { color: #777; font-size: .9rem; margin: 0 0 .5rem; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font: inherit; }
input { font: inherit; padding: .3rem .5rem; min-width: 16rem; }
button { font: inherit; padding: .3rem .8rem; }
`;

const URL_PATTERN = /https?:\/\/[^\s<>"')\]]+/g;

/** The text with each http(s) URL turned into a link (JSX escapes the rest). */
const LinkedText: FC<{ text: string }> = ({ text }) => {
  const parts: Child[] = [];
  let last = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    const url = match[0].replace(/[.,;:!?]+$/, "");
    parts.push(text.slice(last, match.index));
    parts.push(<a href={url}>{url}</a>);
    last = match.index + url.length;
  }
  parts.push(text.slice(last));
  return <pre>{parts}</pre>;
};

const Message: FC<{ message: DevMailView }> = ({ message }) => (
  <article id={`mail-${message.id}`}>
    <h2>{message.subject}</h2>
    <p class="meta">
      To <a href={`/__dev/mail?to=${encodeURIComponent(message.to)}`}>{message.to}</a> ·{" "}
      <time datetime={message.created_at}>{`${message.created_at.slice(0, 19).replace("T", " ")} UTC`}</time>
    </p>
    <LinkedText text={message.text} />
  </article>
);

export function renderDevMailPage(messages: DevMailView[], to: string | null): string {
  const page = (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Development mail · the relay</title>
        <style dangerouslySetInnerHTML={{ __html: css }} />
      </head>
      <body>
        <h1>Development mail</h1>
        <p>
          In development mode the relay sends no mail: every message lands here, newest first.
          The same list as JSON: <code>GET /__dev/mail</code> with <code>Accept: application/json</code>.
        </p>
        <form method="get" action="/__dev/mail">
          <label for="to">Recipient </label>
          <input id="to" name="to" type="email" value={to ?? ""} placeholder="anyone" />{" "}
          <button type="submit">Show</button> {to ? <a href="/__dev/mail">show all</a> : null}
        </form>
        {messages.length === 0
          ? <p id="empty">{to ? `No mail to ${to} yet.` : "No mail yet."}</p>
          : messages.map((message) => <Message message={message} />)}
      </body>
    </html>
  );
  return `<!doctype html>${page}`;
}
