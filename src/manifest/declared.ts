/**
 * The one place an undeclared collection is refused: every door that names a collection
 * (row routes, the feed filter, retention, the permission engine, row validation) answers
 * the same 404 `collection_not_found`, with the same words and the name in details.
 */
import { RelayError } from "../errors";
import type { CompiledCollection, CompiledManifest } from "./types";

export function collectionNotFound(name: string): RelayError {
  return new RelayError("collection_not_found", `The app declares no collection "${name}".`, { collection: name });
}

/** The compiled collection `name`, or collection_not_found. */
export function declaredCollection(manifest: CompiledManifest, name: string): CompiledCollection {
  if (!Object.hasOwn(manifest.collections, name)) throw collectionNotFound(name);
  return manifest.collections[name];
}
