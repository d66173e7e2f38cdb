// The plain-text templates of notify and schedule mails (WIRE §5.4): each {{field}} is the
// row's top-level value as literal text, missing or null as nothing, never read again as
// a template.
import { describe, expect, it } from "vitest";
import { renderTextTemplate } from "../../../src/rules/templates";

describe("renderTextTemplate", () => {
  it("puts each field's value in as text; missing and null are empty", () => {
    expect(renderTextTemplate("Due: {{title}} ({{ count }}, {{done}}){{nope}}{{gone}}", { title: "Pay rent", count: 3, done: false, gone: null }))
      .toBe("Due: Pay rent (3, false)");
  });

  it("writes lists and objects as JSON and keeps a value's braces literal", () => {
    expect(renderTextTemplate("{{tags}} / {{meta}} / {{text}}", { tags: ["a", "b"], meta: { x: 1 }, text: "{{tags}} <b>&" }))
      .toBe('["a","b"] / {"x":1} / {{tags}} <b>&');
  });

  it("renders placeholders empty against data that is not an object", () => {
    expect(renderTextTemplate("[{{a}}]", ["not", "an", "object"])).toBe("[]");
    expect(renderTextTemplate("[{{a}}]", null)).toBe("[]");
  });
});
