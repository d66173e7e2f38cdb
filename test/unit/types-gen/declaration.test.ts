// The declaration file for a whole manifest: names, the Collections map and the overlay.
import { describe, expect, it } from "vitest";
import { typesDeclaration } from "../../../src/types-gen";
import { typesManifest } from "./fixture";

describe("typesDeclaration", () => {
  const text = typesDeclaration(typesManifest(), "Typed app v1");

  it("names each collection's type in PascalCase, de-duplicated and clear of fixed names", () => {
    expect(text).toContain("export type Todos = {");
    expect(text).toContain("export type People = {");
    expect(text).toContain("export type Row2 = {");
    expect(text).toContain("export type TodoItems = Todos;");
    expect(text).toContain("export type TodoItems2 = People;");
    expect(text).toMatch(/export interface Collections \{\n {2}todos: Todos;\n {2}people: People;\n {2}row: Row2;\n {2}todo_items: TodoItems;\n {2}"todo-items": TodoItems2;\n\}/);
  });

  it("turns the schema features into types", () => {
    expect(text).toContain("  status: \"open\" | \"done\";");
    expect(text).toContain("  kind?: \"todo\";");
    expect(text).toContain("  estimate?: number | null;");
    expect(text).toContain("  note?: string | null;");
    expect(text).toContain("  tags?: string[];");
    expect(text).toContain("  assignee?: {\n    name: string;\n    [key: string]: unknown;\n  };");
    expect(text).toContain("  ref?: string | number;");
    expect(text).toContain("  /** format: date */\n  due?: string;");
    expect(text).toContain("  /** What to do */\n  title: string;");
    expect(text).toMatch(/weird\?: unknown \/\* "not" has no TypeScript equivalent \*\//);
    expect(text).toContain('  "odd-key"?: boolean;');
    expect(text).toContain("export type Row2 = {\n  [key: string]: number;\n};");
  });

  it("closes objects with additionalProperties false and leaves the others open", () => {
    const todo = text.slice(text.indexOf("export type Todos"), text.indexOf("export type People"));
    expect(todo).not.toContain("\n  [key: string]");
    const person = text.slice(text.indexOf("export type People"), text.indexOf("export type Row2"));
    expect(person).toContain("[key: string]: unknown;");
  });

  it("types the page script per collection", () => {
    expect(text).toContain("snapshot<N extends CollectionName>(name: N): Row<Collections[N]>[];");
    expect(text).toContain("export interface Row<T> {");
    expect(text).toContain("declare global {");
  });
});
