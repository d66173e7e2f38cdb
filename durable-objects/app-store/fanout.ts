/**
 * One live fan-out (watchers.ts `flush`): the entries committed since the last one, turned
 * into the frames each caught-up socket gets, with as little work per socket as possible.
 *
 * A socket's reader is judged by a `ReadPlan`: its read decision per collection, taken once
 * per manifest version and shared by every socket of the same principal. Readers whose
 * plans hold the same row filter (or none) for every collection a fan-out touches form
 * one reader class: they see the same projection of every entry, whoever they are, so
 * each class is filtered once and each frame serialised once per class. Every entry is
 * serialised once per fan-out (its retraction too, when some class gets one), the row
 * each entry names is looked up once, and frames are built from those strings. A socket
 * then costs a plan lookup, a class lookup and its sends.
 */
import type { CompiledManifest } from "../../src/manifest";
import type { Author, Principal } from "../../src/permissions";
import type { HeldEntry } from "./feed";
import { creatorOf, readDecision, retraction, sightOf, type ReadDecision } from "./visibility";

/** The most a single frame carries before it is split. */
export const FRAME_BYTES = 512 * 1024;

/** An entry as it goes on the wire: its seq and its JSON text. */
interface SerialisedEntry {
  seq: number;
  text: string;
}

/** One collection's read decision, with a key that is equal for readers who read the same rows. */
interface CollectionRead {
  classKey: string;
  decision: ReadDecision;
}

/** A reader's read decisions under one manifest version, each taken the first time a fan-out needs it. */
export class ReadPlan {
  private readonly reads = new Map<string, CollectionRead>();

  constructor(readonly version: number, private readonly manifest: CompiledManifest, private readonly principal: Principal) {}

  read(collection: string): CollectionRead {
    let read = this.reads.get(collection);
    if (!read) {
      const decision = readDecision(this.manifest, this.principal, collection);
      read = { classKey: decision ? JSON.stringify(decision.filter) : "", decision };
      this.reads.set(collection, read);
    }
    return read;
  }
}

/**
 * Serialised entries as frames of at most FRAME_BYTES each: one entry is an `entry` frame,
 * several a `batch` that is caught up (`truncated: false`, cursor = its last seq).
 */
function liveFrames(entries: readonly SerialisedEntry[]): string[] {
  const frames: string[] = [];
  let chunk: SerialisedEntry[] = [];
  let bytes = 0;
  const flush = () => {
    if (chunk.length === 1) frames.push(`{"type":"entry","entry":${chunk[0].text}}`);
    else if (chunk.length > 1) frames.push(`{"type":"batch","entries":[${chunk.map((entry) => entry.text).join(",")}],"cursor":${chunk[chunk.length - 1].seq},"truncated":false}`);
    chunk = [];
    bytes = 0;
  };
  for (const entry of entries) {
    if (chunk.length > 0 && bytes + entry.text.length > FRAME_BYTES) flush();
    chunk.push(entry);
    bytes += entry.text.length;
  }
  flush();
  return frames;
}

/** What one reader class gets from this fan-out: its entries, and their frames once a socket needed them whole. */
interface ClassShare {
  entries: SerialisedEntry[];
  frames: string[] | null;
}

export class Fanout {
  /** The touched collections, in a fixed order: a class key lists the plan's key for each. */
  private readonly collections: string[];
  private readonly texts: (string | undefined)[] = [];
  private readonly retractionTexts: (string | undefined)[] = [];
  private readonly creators: (Author | undefined)[] = [];
  private readonly byPlan = new Map<ReadPlan, ClassShare>();
  private readonly byClass = new Map<string, ClassShare>();

  constructor(private readonly sql: SqlStorage, private readonly held: readonly HeldEntry[]) {
    this.collections = [...new Set(held.map((item) => item.entry.collection_name))].sort();
  }

  /** The frames a socket read through `plan` gets, leaving out what its cursor already covers (a `sub` page may have carried some). */
  framesFor(plan: ReadPlan, cursor: number): string[] {
    const share = this.shareOf(plan);
    if (share.entries.length === 0) return [];
    if (share.entries[0].seq > cursor) return (share.frames ??= liveFrames(share.entries));
    return liveFrames(share.entries.filter((entry) => entry.seq > cursor));
  }

  private shareOf(plan: ReadPlan): ClassShare {
    let share = this.byPlan.get(plan);
    if (share) return share;
    const classKey = this.collections.map((name) => plan.read(name).classKey).join("\n");
    share = this.byClass.get(classKey);
    if (!share) {
      share = { entries: this.visibleThrough(plan), frames: null };
      this.byClass.set(classKey, share);
    }
    this.byPlan.set(plan, share);
    return share;
  }

  private visibleThrough(plan: ReadPlan): SerialisedEntry[] {
    const out: SerialisedEntry[] = [];
    this.held.forEach((item, index) => {
      const { decision } = plan.read(item.entry.collection_name);
      if (!decision) return;
      const sight = sightOf(item, this.creator(index), decision.canRead);
      if (sight === "entry") out.push({ seq: item.entry.seq, text: (this.texts[index] ??= JSON.stringify(item.entry)) });
      else if (sight === "retraction") out.push({ seq: item.entry.seq, text: (this.retractionTexts[index] ??= JSON.stringify(retraction(item.entry))) });
    });
    return out;
  }

  private creator(index: number): Author {
    return (this.creators[index] ??= creatorOf(this.sql, this.held[index].entry));
  }
}
