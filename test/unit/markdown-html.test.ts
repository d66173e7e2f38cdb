// The guides' markdown as HTML (src/docs/markdown-html.ts): the blocks the guides use,
// headings with GitHub's anchors, and nothing of the source passing through as markup.
import { describe, expect, it } from "vitest";
import { headingAnchor, inlineHtml, markdownToHtml } from "../../src/docs/markdown-html";

describe("markdown to HTML for the guides", () => {
  it("headings get GitHub's anchors, repeated ones a counter; the first is the title", () => {
    expect(headingAnchor("Conditions (when)")).toBe("conditions-when");
    expect(headingAnchor("Redeploying: the compatibility gate")).toBe("redeploying-the-compatibility-gate");
    const { title, html } = markdownToHtml("# The `app` manifest\n\n## Errors\n\n### Errors\n");
    expect(title).toBe("The app manifest");
    expect(html).toContain('<h1 id="the-app-manifest"><a class="anchor" href="#the-app-manifest">The <code>app</code> manifest</a></h1>');
    expect(html).toContain('<h2 id="errors">');
    expect(html).toContain('<h3 id="errors-1">');
  });

  it("paragraphs join their lines; fenced and indented code keep theirs, escaped", () => {
    const { html } = markdownToHtml("one\ntwo\n\n```json\n{ \"a\": \"<b>\" }\n```\n\n    x < y\n    z\n");
    expect(html).toBe('<p>one two</p>\n<pre><code class="language-json">{ &quot;a&quot;: &quot;&lt;b&gt;&quot; }</code></pre>\n<pre><code>x &lt; y\nz</code></pre>');
  });

  it("tables, with \\| as a pipe inside a cell", () => {
    const { html } = markdownToHtml("| a | b |\n|---|---|\n| `x \\| y` | **z** |\n");
    expect(html).toBe("<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody>\n<tr><td><code>x | y</code></td><td><strong>z</strong></td></tr>\n</tbody></table>");
  });

  it("lists, with their continuation lines, and ordered lists", () => {
    const { html } = markdownToHtml("- one\n  more\n- two\n\n1. first\n2. second\n");
    expect(html).toBe("<ul>\n<li>one more</li>\n<li>two</li>\n</ul>\n<ol>\n<li>first</li>\n<li>second</li>\n</ol>");
  });

  it("nothing passes through as markup, and only web, path and anchor links are links", () => {
    expect(inlineHtml("<script>alert(1)</script> & \"q\"")).toBe("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;");
    expect(inlineHtml("[guide](/docs/manifest#limits) and [x](https://example.com)")).toBe('<a href="/docs/manifest#limits">guide</a> and <a href="https://example.com">x</a>');
    expect(inlineHtml("[bad](javascript:alert(1))")).not.toContain("<a ");
    expect(inlineHtml("[bad](//evil.example)")).not.toContain("<a ");
    expect(inlineHtml("`<a href=x>` *em* _em_ snake_case_name")).toBe("<code>&lt;a href=x&gt;</code> <em>em</em> <em>em</em> snake_case_name");
  });
});
