/**
 * Safe TypeScript identifiers for generated declarations. Collection and `$defs` names are
 * free-form manifest strings; the declaration file needs PascalCase names that are valid
 * identifiers, never reserved words, and never collide with each other or with the fixed
 * names the file itself declares (Row, Author, Collections, ...).
 */

const RESERVED = new Set([
  "Row", "Author", "Collections", "CollectionName", "RowEvent", "ServiceCollections", "Array", "Object",
  "String", "Number", "Boolean", "Promise", "Record", "Partial", "Date", "Error", "Function", "Symbol",
]);

/** `todo-items` → `TodoItems`; a name that would start with a digit (or be empty) gets a `T` prefix. */
export function pascalCase(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter((word) => word.length > 0);
  const joined = words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join("");
  return /^[A-Za-z]/.test(joined) ? joined : `T${joined}`;
}

/** Hands out unique identifiers: the first asker of `Todo` gets it, the next `Todo2`. */
export class NameAllocator {
  private readonly taken = new Set<string>(RESERVED);

  allocate(raw: string): string {
    const base = pascalCase(raw);
    let candidate = base;
    for (let suffix = 2; this.taken.has(candidate); suffix += 1) candidate = `${base}${suffix}`;
    this.taken.add(candidate);
    return candidate;
  }
}

/** A property key as written in a type literal: bare when it is an identifier, quoted otherwise. */
export function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}
