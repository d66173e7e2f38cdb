/** Typed definitions from a manifest: the one entry point the route and the CLI use. */
export { typesDeclaration } from "./declaration";
export { schemaToType } from "./schema-to-ts";
export { pascalCase, NameAllocator } from "./names";
