/**
 * Builds the `types.d.ts` an agent gets for one app version: a type per collection's row
 * `data` (from its `$defs` schema), the page's `Row<T>` shape, and a typed overlay of
 * `window.service.collections` so `snapshot("todos")` is `Row<Todo>[]`. Pure: a compiled
 * manifest in, a string out; the route and the CLI only carry it.
 */
import type { CompiledManifest } from "../manifest/types";
import { isObject, own } from "../manifest/read";
import { NameAllocator, propertyKey } from "./names";
import { schemaToType } from "./schema-to-ts";

/** Names every collection's data type; collections sharing a `$defs` entry share its type. */
function nameTypes(manifest: CompiledManifest) {
  const names = new NameAllocator();
  const collectionTypes = new Map<string, string>();
  const defTypes = new Map<string, string>();
  for (const collection of Object.values(manifest.collections)) {
    const typeName = names.allocate(collection.name);
    collectionTypes.set(collection.name, typeName);
    if (collection.schema && !defTypes.has(collection.schema.def)) defTypes.set(collection.schema.def, typeName);
  }
  return { collectionTypes, defTypes };
}

const FIXED = `/** Who wrote a row last: human, agent, grant, visitor, anon, or a machine kind (service, hook, system). */
export interface Author {
  kind: string;
  id: string;
}

/** A row as the page script hands it out: camelCase, with \`data\` typed per collection. */
export interface Row<T> {
  key: string;
  data: T;
  version: number;
  author: Author;
  createdAt: string;
  updatedAt: string;
}`;

const OVERLAY = `export type CollectionName = keyof Collections;

export type RowEvent<N extends CollectionName> =
  | { kind: "upsert"; collection: N; row: Row<Collections[N]> }
  | { kind: "delete"; collection: N; row: { key: string; deletedAt: string } };

/** \`window.service.collections\`, typed by collection name. */
export interface ServiceCollections {
  snapshot<N extends CollectionName>(name: N): Row<Collections[N]>[];
  get<N extends CollectionName>(name: N, key: string): Row<Collections[N]> | undefined;
  count(name: CollectionName): Promise<number>;
  list<N extends CollectionName>(
    name: N,
    options?: { where?: unknown[]; sort?: unknown[]; limit?: number; since?: string },
  ): Promise<{ rows: Row<Collections[N]>[]; next_cursor: string | null; has_more: boolean }>;
  on<N extends CollectionName>(name: N, handler: (event: RowEvent<N>) => void): () => void;
  create<N extends CollectionName>(name: N, data: Collections[N]): Promise<Row<Collections[N]>>;
  upsert<N extends CollectionName>(name: N, key: string, data: Collections[N]): Promise<Row<Collections[N]>>;
  update<N extends CollectionName>(name: N, key: string, data: Collections[N], options?: { ifMatch?: number }): Promise<Row<Collections[N]>>;
  delete(name: CollectionName, key: string, options?: { ifMatch?: number }): Promise<void>;
}

declare global {
  interface Window {
    service: { collections: ServiceCollections; [member: string]: unknown };
  }
  var service: Window["service"];
}`;

/** The whole declaration file for one compiled manifest; `label` names the app and version in the header. */
export function typesDeclaration(manifest: CompiledManifest, label: string): string {
  const defs = isObject(manifest.source.$defs) ? manifest.source.$defs : {};
  const { collectionTypes, defTypes } = nameTypes(manifest);
  const nameRef = (defName: string) => defTypes.get(defName);
  const blocks: string[] = [`// Types for ${label.replace(/[\r\n]/g, " ")}, generated from its manifest. Do not edit: regenerate after a deploy.`, FIXED];
  const emitted = new Set<string>();
  for (const [defName, typeName] of defTypes) {
    if (emitted.has(typeName)) continue;
    emitted.add(typeName);
    blocks.push(`/** \`$defs/${defName.replace(/\*\//g, "* /")}\` */\nexport type ${typeName} = ${schemaToType(own(defs, defName), nameRef)};`);
  }
  const entries: string[] = [];
  for (const [collectionName, typeName] of collectionTypes) {
    const collection = manifest.collections[collectionName]!;
    // A collection without a schema accepts any JSON object as data.
    if (!collection.schema) blocks.push(`/** \`${collectionName}\` declares no schema. */\nexport type ${typeName} = { [key: string]: unknown };`);
    else if (defTypes.get(collection.schema.def) !== typeName) blocks.push(`export type ${typeName} = ${defTypes.get(collection.schema.def)};`);
    entries.push(`  ${propertyKey(collectionName)}: ${typeName};`);
  }
  blocks.push(`/** Row data type of every collection, by name. */\nexport interface Collections {\n${entries.join("\n")}\n}`, OVERLAY);
  return `${blocks.join("\n\n")}\n`;
}
