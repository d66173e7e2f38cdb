// A create with starter rows (input_data) over /v1 held between its D1 batch and its
// seed, for tests of what is seen while a create is in flight (or after the relay died
// there): the create runs through the relay's real entry point with the real AppStore
// namespace behind a gate that holds the store's `seed` call. By then the app and its
// version are in D1 (with its hooks and webhook secret) but its store holds no row;
// `release` lets the create carry on to its answer. `seedAnswerLost` lets the seed land
// and loses its answer instead; `handOverAnswerLost` does the same to the hand-over's
// statement in D1.
import { env } from "cloudflare:test";
import { callWith } from "../helpers";

export interface HeldSeed {
  /** Settles once the create has made its app and is about to seed it. */
  reached: Promise<void>;
  /** The create's answer, once released. */
  answer: Promise<Response>;
  release(): void;
}

/**
 * `target` with the members in `replaced` swapped; its own methods are called on it (not
 * bound: on a Durable Object stub `bind` would itself be a remote call).
 */
function withMembers<T extends object>(target: T, replaced: Record<string, unknown>): T {
  return new Proxy(target, {
    get(inner, property) {
      if (typeof property === "string" && property in replaced) return replaced[property];
      const value = Reflect.get(inner, property) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => (inner as Record<PropertyKey, (...a: unknown[]) => unknown>)[property](...args);
    },
  });
}

type Seed = (...args: unknown[]) => Promise<unknown>;

/** The real AppStore namespace, except that each store's `seed` goes through `around` (given the real one). */
function storesWithSeed(around: (seed: Seed, args: unknown[]) => Promise<unknown>): typeof env.APP_STORE {
  const namespace = env.APP_STORE;
  return withMembers(namespace, {
    get: (id: DurableObjectId) => {
      const stub = namespace.get(id);
      const seed: Seed = (...args) => (stub as unknown as { seed: Seed }).seed(...args);
      return withMembers(stub, { seed: (...args: unknown[]) => around(seed, args) });
    },
  });
}

/** `body` is the create's JSON body; `overrides` are extra bindings for its request (e.g. a lower app cap). */
export function heldSeed(key: string, body: Record<string, unknown>, overrides: Record<string, unknown> = {}): HeldSeed {
  let reachedGate!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => { reachedGate = resolve; });
  const gate = new Promise<void>((resolve) => { release = resolve; });
  const gated = storesWithSeed(async (seed, args) => {
    reachedGate();
    await gate;
    return seed(...args);
  });
  const answer = callWith({ ...overrides, APP_STORE: gated }, "/v1/apps", { key, json: body });
  // A create refused before it made its app never reaches the gate: let the test see why.
  void answer.then(() => reachedGate(), () => reachedGate());
  return { reached, answer, release };
}

/** A create whose seed is written in the store but whose answer never comes back (the connection to the store drops after it). */
export function seedAnswerLost(key: string, body: Record<string, unknown>): Promise<Response> {
  const lossy = storesWithSeed(async (seed, args) => {
    await seed(...args);
    throw new Error("Network connection lost.");
  });
  return callWith({ APP_STORE: lossy }, "/v1/apps", { key, json: body });
}

/** The hand-over's statement (src/db/apps.ts handOverApp) as it starts; nothing else updates an app's owner from a placeholder. */
const HAND_OVER = /^UPDATE apps SET owner_human_id = /;

/** The real D1 binding, except that the hand-over's statement lands and its answer is lost (the connection drops after it). */
export function handOverAnswerLostDb(): D1Database {
  const lossyStatement = (statement: D1PreparedStatement): D1PreparedStatement => withMembers(statement, {
    bind: (...values: unknown[]) => lossyStatement(statement.bind(...values)),
    run: async () => {
      await statement.run();
      throw new Error("Network connection lost.");
    },
  });
  return withMembers(env.DB, {
    prepare: (query: string) => (HAND_OVER.test(query) ? lossyStatement(env.DB.prepare(query)) : env.DB.prepare(query)),
  });
}

/** A create with starter rows whose hand-over lands in D1 but whose answer is lost. */
export function handOverAnswerLost(key: string, body: Record<string, unknown>): Promise<Response> {
  return callWith({ DB: handOverAnswerLostDb() }, "/v1/apps", { key, json: body });
}
