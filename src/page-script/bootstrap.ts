/**
 * The inline bootstrap the relay puts first in every served document's <head>. It runs
 * synchronously during parse, so `window.service` exists before any author script: `ready`
 * is a pending promise, `session` and `app` hold their pre-ready defaults (app facts come
 * from the server in the script's `data-svc` attribute), synchronous reads answer their
 * pre-ready defaults (`snapshot` → `[]`, `get` → undefined, `feed.cursor` → 0), and every
 * other call — `session.login()`, `collections.create(...)`, `collections.on(...)` … — is
 * queued for the deferred bundle to replay; promises handed out here settle then.
 * Kept tiny: it is sent inline with every document.
 */
import type { Author, BootConfig, BootstrappedService, BufferedCall, Internal, ServiceCollections, ServiceConnections, ServiceNotifications, ServicePush, ServiceTasks, ServiceBlobs } from "./types";

(() => {
  if (window.service?.__svc) return;
  let config: BootConfig;
  try {
    config = JSON.parse(document.currentScript?.getAttribute("data-svc") ?? "") as BootConfig;
  } catch {
    config = { slug: "", name: "", description: null, icon: null, visibility: "public", authorize: "" };
  }
  const queue: BufferedCall[] = [];
  let resolve: () => void = () => undefined;
  const ready = new Promise<void>((r) => {
    resolve = r;
  });
  const buffered = (n: string) => (...a: unknown[]): void => {
    queue.push({ n, a });
  };
  const later = (n: string) => (...a: unknown[]) => new Promise((ok, no) => {
    queue.push({ n, a, ok, no });
  });
  const subscribe = (n: string) => (...a: unknown[]) => {
    const call: BufferedCall = { n, a };
    queue.push(call);
    return () => {
      call.x = true;
      call.off?.();
    };
  };
  const collections = { snapshot: () => [], get: () => undefined, on: subscribe("collections.on") } as unknown as ServiceCollections;
  for (const m of ["count", "list", "create", "upsert", "update", "delete"]) (collections as unknown as Record<string, unknown>)[m] = later(`collections.${m}`);
  const service: BootstrappedService = {
    ready,
    session: {
      kind: "anonymous", humanId: null, visitorId: null, displayName: null,
      login: buffered("session.login"), logout: buffered("session.logout"),
    },
    app: { slug: config.slug, name: config.name, description: config.description, icon: config.icon, visibility: config.visibility, collections: [] },
    collections,
    feed: { cursor: 0, on: subscribe("feed.on") },
    members: {
      list: later("members.list") as () => Promise<never>,
      nameFor: (a: Author | null | undefined) => (a?.kind === "human" ? "a member" : a?.kind === "agent" ? "an agent" : "a visitor"),
    },
    connections: { set: later("connections.set"), status: later("connections.status") } as unknown as ServiceConnections,
    notifications: {
      list: later("notifications.list"), count: later("notifications.count"), markRead: later("notifications.markRead"),
      preferences: { get: later("notifications.preferences.get"), set: later("notifications.preferences.set") },
    } as unknown as ServiceNotifications,
    push: { enable: later("push.enable"), status: later("push.status"), disable: later("push.disable") } as unknown as ServicePush,
    tasks: { forRow: later("tasks.forRow") } as unknown as ServiceTasks,
    uploadBlob: later("uploadBlob") as ServiceBlobs["uploadBlob"],
    downloadBlob: later("downloadBlob") as ServiceBlobs["downloadBlob"],
    saveBlob: later("saveBlob") as ServiceBlobs["saveBlob"],
  };
  const internal: Internal = { config, queue, resolve, attached: false };
  Object.defineProperty(service, "__svc", { value: internal, enumerable: false });
  window.service = service;
})();
