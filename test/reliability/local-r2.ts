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

/** Bytes of the relay's local Durable Object storage (databases and their logs): it grows as a store writes rows. */
export function storeBytes(persistTo: string): number {
  let total = 0;
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const stat = statSync(path.join(dir, name), { throwIfNoEntry: false });
      if (stat?.isDirectory()) walk(path.join(dir, name));
      else if (stat) total += stat.size;
    }
  };
  walk(path.join(persistTo, "v3", "do"));
  return total;
}
