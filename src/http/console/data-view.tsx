/**
 * Pieces the console's data pages share (a collection's rows, the live feed): who wrote
 * something, named the way the owner knows them (a member or the owner by name or address,
 * one of their agents by name, anyone else by what they are); a row's data shown field by
 * field, cut short when long; and the "next page" link of a paged list.
 */
import type { Author } from "../../permissions";
import type { AppDirectory } from "../../db/directory";

const KIND_WORDS: Record<Author["kind"], string> = {
  human: "person", agent: "agent", grant: "grant link holder", visitor: "visitor", anon: "anonymous",
  service: "service credential", hook: "inbound hook", system: "the relay",
};

/** Names authors from the app's directory: people by name (else address), agents by name. */
export function authorNamer(directory: AppDirectory): (author: Author) => string {
  const people = new Map<string, string>();
  if (directory.owner) people.set(directory.owner.id, directory.owner.name ?? directory.owner.email);
  for (const m of directory.members) people.set(m.id, m.name ?? m.email);
  const agents = new Map(directory.agents.map((a) => [a.id, a.name ?? a.id]));
  return (author) => {
    if (author.kind === "human" && people.has(author.id)) return people.get(author.id)!;
    if (author.kind === "agent" && agents.has(author.id)) return `agent ${agents.get(author.id)}`;
    if (author.kind === "anon" || author.kind === "system") return KIND_WORDS[author.kind];
    return `${KIND_WORDS[author.kind] ?? author.kind} ${author.id}`;
  };
}

export function AuthorCell({ author, name }: { author: Author; name: (author: Author) => string }) {
  return <td data-field="author" data-author-kind={author.kind} data-label="Author">{name(author)}</td>;
}

const VALUE_CHARS = 200;
const FIELDS_SHOWN = 8;

function cut(text: string): string {
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS)}…` : text;
}

/**
 * Row data for reading: an object's fields one per line (strings as they are, anything
 * else as JSON), other values as JSON; long values and many fields cut short (the full row
 * is one API call away).
 */
export function DataPreview({ data }: { data: unknown }) {
  if (data === null || data === undefined) return <span class="muted">no data</span>;
  if (typeof data !== "object" || Array.isArray(data)) return <code class="data">{cut(JSON.stringify(data))}</code>;
  const fields = Object.entries(data);
  if (fields.length === 0) return <span class="muted">empty</span>;
  return (
    <dl class="row-data">
      {fields.slice(0, FIELDS_SHOWN).map(([name, value]) => (
        <><dt>{name}</dt><dd data-name={name}>{typeof value === "string" ? cut(value) : <code>{cut(JSON.stringify(value))}</code>}</dd></>
      ))}
      {fields.length > FIELDS_SHOWN ? <><dt class="muted">…</dt><dd class="muted">{fields.length - FIELDS_SHOWN} more fields</dd></> : null}
    </dl>
  );
}

/** The link to the next page (or a note that this is the last one), and back to the first from a later page. */
export function NextPage({ href, first, what }: { href: string | null; first: string | null; what: string }) {
  return (
    <nav aria-label="Pages" class="pager">
      {first ? <><a href={first} id="first-page">First page<span class="vh"> of {what}</span></a>{" · "}</> : null}
      {href ? <a href={href} id="next-page" rel="next">Next page<span class="vh"> of {what}</span></a>
        : <span class="muted" id="last-page">This is the last page.</span>}
    </nav>
  );
}
