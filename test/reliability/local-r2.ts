// What a relay of its own keeps in its local R2 storage, seen from outside: the files
// under its state folder that hold a given text. The kill tests use it to notice bytes
// being stored (an import's staged entries, a deploy's assets) and to check that nothing
// staged is left behind. Reads files only; never changes them.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** Object files under the relay's local R2 storage that contain `text`. */
export function filesHolding(persistTo: string, text: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const full = path.join(dir, name);
      const stat = statSync(full, { throwIfNoEntry: false });
      if (!stat) continue;
      if (stat.isDirectory()) walk(full);
      // Index databases, and the runtime's own temporary files (`.kj-tmp.*`: a write the kill
      // cut short, never an object anyone can read), are not objects.
      else if (!name.includes(".sqlite") && !name.startsWith(".") && stat.size >= text.length && readFileSync(full).includes(text)) found.push(full);
    }
  };
  walk(path.join(persistTo, "v3", "r2"));
  return found;
}

/**
 * Like filesHolding, but only the files the bucket's index names: objects anyone can read.
 * The local R2 writes an object's bytes to `<bucket>/blobs/<id>` before it records the id
 * in its SQLite index, so a relay killed between the two leaves a file no object points
 * at (the local runtime never cleans those up; on Cloudflare there is no such file). A
 * check for what the relay left behind counts objects, not those orphans.
 */
export function objectFilesHolding(persistTo: string, text: string): string[] {
  const indexes = new Map<string, Buffer[]>();
  const indexOf = (bucketDir: string): Buffer[] => {
    let found = indexes.get(bucketDir);
    if (!found) {
      found = readdirSync(bucketDir).filter((name) => name.includes(".sqlite")).map((name) => readFileSync(path.join(bucketDir, name)));
      indexes.set(bucketDir, found);
    }
    return found;
  };
  return filesHolding(persistTo, text).filter((file) => {
    const blobsDir = path.dirname(file);
    if (path.basename(blobsDir) !== "blobs") return true;
    const id = path.basename(file);
    return indexOf(path.dirname(blobsDir)).some((index) => index.includes(id));
  });
}
