/**
 * Markdown to HTML for the guides the relay serves to browsers (/docs/manifest,
 * /docs/page-script). The guides are our own files, so this covers exactly what they use:
 * headings (with the anchors GitHub would give them, so links into a section work the
 * same here and in the repository), paragraphs, fenced and indented code, tables, flat
 * lists, inline code, bold, emphasis and links. Everything else is shown as text; every
 * character of the source is escaped, nothing passes through as HTML.
 */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);
}

/** The anchor of a heading: lowercase, punctuation dropped, spaces to dashes ("Conditions (`when`)" → "conditions-when"). */
export function headingAnchor(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").trim().replace(/\s/g, "-");
}

/** Links only to the web, to paths and to anchors; anything else (a `javascript:` URL) stays text. */
function safeHref(href: string): string | null {
  return /^(https?:\/\/|\/|#|\.{0,2}\/?[\w.-]+(#[\w-]*)?$)/.test(href) && !/^\/\//.test(href) ? href : null;
}

/** Inline markup of one line or cell: code spans first (their content is literal), then links, bold, emphasis. */
export function inlineHtml(text: string): string {
  const held: string[] = [];
  const hold = (html: string) => `\u0000${held.push(html) - 1}\u0000`;
  let out = text.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_m, _ticks: string, code: string) => {
    const trimmed = /^ .* $/.test(code) ? code.slice(1, -1) : code;
    return hold(`<code>${escapeHtml(trimmed)}</code>`);
  });
  out = out.replace(/\\([\\`*_[\]|#-])/g, (_m, ch: string) => hold(escapeHtml(ch)));
  out = escapeHtml(out);
  out = out.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (whole, label: string, href: string) => {
    const target = safeHref(href.replace(/&amp;/g, "&"));
    return target === null ? whole : `<a href="${escapeHtml(target)}">${label}</a>`;
  });
  out = out.replace(/\*\*(\S(?:[\s\S]*?\S)?)\*\*/g, "<strong>$1</strong>");
  out = out.replace(/(^|[\s(])\*(\S(?:[^*]*?\S)?)\*(?=[\s).,;:!?]|$)/g, "$1<em>$2</em>");
  out = out.replace(/(^|[\s(])_(\S(?:[^_]*?\S)?)_(?=[\s).,;:!?]|$)/g, "$1<em>$2</em>");
  return out.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => held[Number(i)]);
}

const FENCE = /^```\s*([\w-]*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const LIST_ITEM = /^([-*]|\d+\.)\s+(.*)$/;
const TABLE_RULE = /^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

function startsBlock(line: string, next: string | undefined): boolean {
  return FENCE.test(line) || HEADING.test(line) || LIST_ITEM.test(line) || (line.startsWith("|") && next !== undefined && TABLE_RULE.test(next));
}

/** The cells of a table row; `\|` is a pipe inside a cell. */
function cells(row: string): string[] {
  const parts = row.trim().replace(/^\|/, "").replace(/\|$/, "").split(/(?<!\\)\|/);
  return parts.map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function table(lines: string[]): string {
  const [head, , ...rows] = lines;
  const th = cells(head).map((cell) => `<th>${inlineHtml(cell)}</th>`).join("");
  const body = rows.map((row) => `<tr>${cells(row).map((cell) => `<td>${inlineHtml(cell)}</td>`).join("")}</tr>`).join("\n");
  return `<table><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** The guide as HTML, and its title (the first heading). */
export function markdownToHtml(markdown: string): { title: string; html: string } {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const blocks: string[] = [];
  const anchors = new Map<string, number>();
  let title = "";
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === "") {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const code: string[] = [];
      for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) code.push(lines[i]);
      i++;
      const lang = fence[1] ? ` class="language-${escapeHtml(fence[1])}"` : "";
      blocks.push(`<pre><code${lang}>${escapeHtml(code.join("\n"))}</code></pre>`);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1].length;
      const text = heading[2];
      const base = headingAnchor(text.replace(/`/g, ""));
      const seen = anchors.get(base) ?? 0;
      anchors.set(base, seen + 1);
      const id = seen === 0 ? base : `${base}-${seen}`;
      if (!title) title = text.replace(/`/g, "");
      blocks.push(`<h${level} id="${escapeHtml(id)}"><a class="anchor" href="#${escapeHtml(id)}">${inlineHtml(text)}</a></h${level}>`);
      i++;
      continue;
    }
    if (line.startsWith("    ")) {
      const code: string[] = [];
      while (i < lines.length && (lines[i].startsWith("    ") || (lines[i].trim() === "" && lines[i + 1]?.startsWith("    ")))) code.push(lines[i++].slice(4));
      blocks.push(`<pre><code>${escapeHtml(code.join("\n"))}</code></pre>`);
      continue;
    }
    if (line.startsWith("|") && lines[i + 1] !== undefined && TABLE_RULE.test(lines[i + 1])) {
      const rows: string[] = [];
      while (i < lines.length && lines[i].startsWith("|")) rows.push(lines[i++]);
      blocks.push(table(rows));
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      const ordered = /\d/.test(item[1][0]);
      const items: string[] = [];
      while (i < lines.length) {
        const start = LIST_ITEM.exec(lines[i]);
        if (!start || /\d/.test(start[1][0]) !== ordered) break;
        const text = [start[2]];
        for (i++; i < lines.length && /^\s{2,}\S/.test(lines[i]); i++) text.push(lines[i].trim());
        items.push(`<li>${inlineHtml(text.join(" "))}</li>`);
        if (lines[i]?.trim() === "" && lines[i + 1] !== undefined && LIST_ITEM.test(lines[i + 1])) i++;
      }
      const tag = ordered ? "ol" : "ul";
      blocks.push(`<${tag}>\n${items.join("\n")}\n</${tag}>`);
      continue;
    }
    const text: string[] = [];
    while (i < lines.length && lines[i].trim() !== "" && (text.length === 0 || !startsBlock(lines[i], lines[i + 1]))) text.push(lines[i++].trim());
    blocks.push(`<p>${inlineHtml(text.join(" "))}</p>`);
  }
  return { title, html: blocks.join("\n") };
}
