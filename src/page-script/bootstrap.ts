/**
 * The inline bootstrap the relay puts first in every served document's <head>. It runs
 * synchronously during parse, so `window.service` exists before any author script: `ready`
 * is a pending promise, `session` and `app` hold their pre-ready defaults (app facts come
 * from the server in the script's `data-svc` attribute), and calls such as
 * `session.login()` made before the deferred bundle arrives are queued for it to replay.
 * Kept tiny: it is sent inline with every document.
 */
import type { BootConfig, BootstrappedService, BufferedCall, Internal } from "./types";

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
  const buffered = (name: string) => (...args: unknown[]): void => {
    queue.push([name, args]);
  };
  const service: BootstrappedService = {
    ready,
    session: {
      kind: "anonymous", humanId: null, visitorId: null, displayName: null,
      login: buffered("session.login"), logout: buffered("session.logout"),
    },
    app: { slug: config.slug, name: config.name, description: config.description, icon: config.icon, visibility: config.visibility },
  };
  const internal: Internal = { config, queue, resolve, attached: false };
  Object.defineProperty(service, "__svc", { value: internal, enumerable: false });
  window.service = service;
})();
