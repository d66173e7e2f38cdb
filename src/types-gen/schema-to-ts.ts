/**
 * Turns one JSON Schema (a manifest `$defs` entry or any part of it) into a TypeScript type
 * expression. Pure: the caller says how a `$ref` to a `$defs` entry is named. What TypeScript
 * cannot say (`not`, `if`/`then`, patternProperties, refs outside `$defs`, ...) becomes
 * `unknown` with a comment naming the reason, so the file always compiles.
 */
import type { JsonObject, JsonValue } from "../manifest/types";
import { isObject } from "../manifest/read";
import { propertyKey } from "./names";

/** How the converter names a `#/$defs/<Name>` reference; `undefined` for an unknown entry. */
export type RefNamer = (defName: string) => string | undefined;

const MAX_DEPTH = 32;
const UNSUPPORTED_KEYWORDS = ["not", "if", "patternProperties", "dependentSchemas", "unevaluatedProperties"];

function unknownBecause(reason: string): string {
  return `unknown /* ${reason.replace(/\*\//g, "* /")} */`;
}

function comment(text: string): string {
  return text.replace(/\*\//g, "* /").replace(/\s+/g, " ").trim();
}

function literal(value: JsonValue): string | null {
  if (value === null || typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : null;
  return null;
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  if (unique.length === 0) return "never";
  return unique.length === 1 ? unique[0]! : unique.map((part) => (part.includes(" ") && !part.startsWith("{") ? `(${part})` : part)).join(" | ");
}

/** The converter for one schema document; `indent` is the indentation of the line the type starts on. */
export function schemaToType(schema: JsonValue | undefined, nameRef: RefNamer, indent = "", depth = 0): string {
  if (schema === undefined || schema === true) return "unknown";
  if (schema === false) return "never";
  if (!isObject(schema)) return unknownBecause("not a schema");
  if (depth > MAX_DEPTH) return unknownBecause("nested too deeply");
  const base = baseType(schema, nameRef, indent, depth);
  return schema.nullable === true && base !== "unknown" ? union([base, "null"]) : base;
}

function baseType(schema: JsonObject, nameRef: RefNamer, indent: string, depth: number): string {
  const next = (sub: JsonValue | undefined, extraIndent = "") => schemaToType(sub, nameRef, indent + extraIndent, depth + 1);
  if (typeof schema.$ref === "string") {
    const match = /^#\/\$defs\/([^/]+)$/.exec(schema.$ref);
    const name = match ? nameRef(match[1]!) : undefined;
    return name ?? unknownBecause(`unsupported $ref ${schema.$ref}`);
  }
  if ("const" in schema) return literal(schema.const!) ?? unknownBecause("non-scalar const");
  if (Array.isArray(schema.enum)) {
    const literals = schema.enum.map(literal);
    return literals.every((item) => item !== null) ? union(literals as string[]) : unknownBecause("non-scalar enum");
  }
  const unsupported = UNSUPPORTED_KEYWORDS.find((keyword) => keyword in schema);
  if (unsupported) return unknownBecause(`"${unsupported}" has no TypeScript equivalent`);
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (alternatives) return union(alternatives.map((alternative) => next(alternative)));
  if (Array.isArray(schema.allOf)) return schema.allOf.map((part) => `(${next(part)})`).join(" & ") || "unknown";
  const types = Array.isArray(schema.type) ? schema.type : typeof schema.type === "string" ? [schema.type] : null;
  if (!types) return isObject(schema.properties) ? objectType(schema, nameRef, indent, depth) : "unknown";
  return union(types.map((type) => typeFor(String(type), schema, nameRef, indent, depth)));
}

function typeFor(type: string, schema: JsonObject, nameRef: RefNamer, indent: string, depth: number): string {
  switch (type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return arrayType(schema, nameRef, indent, depth);
    case "object":
      return objectType(schema, nameRef, indent, depth);
    default:
      return unknownBecause(`unknown type "${type}"`);
  }
}

function arrayType(schema: JsonObject, nameRef: RefNamer, indent: string, depth: number): string {
  const item = (sub: JsonValue | undefined) => schemaToType(sub, nameRef, indent, depth + 1);
  if (Array.isArray(schema.prefixItems)) {
    const head = schema.prefixItems.map((sub) => item(sub));
    if (schema.items === false) return `[${head.join(", ")}]`;
    return `[${[...head, `...(${item(schema.items)})[]`].join(", ")}]`;
  }
  const element = item(schema.items);
  return /^[A-Za-z0-9_]+$/.test(element) ? `${element}[]` : `Array<${element}>`;
}

function objectType(schema: JsonObject, nameRef: RefNamer, indent: string, depth: number): string {
  const inner = `${indent}  `;
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === "string") : []);
  const lines: string[] = [];
  for (const [name, sub] of Object.entries(properties)) {
    const notes = [isObject(sub) && typeof sub.description === "string" ? comment(sub.description) : "", isObject(sub) && typeof sub.format === "string" ? `format: ${comment(sub.format)}` : ""].filter(Boolean);
    if (notes.length > 0) lines.push(`${inner}/** ${notes.join("; ")} */`);
    lines.push(`${inner}${propertyKey(name)}${required.has(name) ? "" : "?"}: ${schemaToType(sub, nameRef, inner, depth + 1)};`);
  }
  const extra = schema.additionalProperties;
  if (extra !== false) {
    // An index signature must admit every declared property's type, so a typed one only fits an object without properties.
    const extraType = Object.keys(properties).length === 0 && isObject(extra) ? schemaToType(extra, nameRef, inner, depth + 1) : "unknown";
    lines.push(`${inner}[key: string]: ${extraType};`);
  }
  return lines.length === 0 ? "{}" : `{\n${lines.join("\n")}\n${indent}}`;
}
