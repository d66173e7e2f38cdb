/**
 * `service.push` (WIRE §4.2): browser push for the signed-in viewer of a public app with
 * `offline: true`. `enable()` is the only page-script call that may show a browser
 * prompt (the notification permission), so a page calls it from a click. It registers
 * the relay's service worker (`/_svc/sw.js`, which shows the pushes), subscribes with the
 * relay's VAPID key (`GET /_svc/push`) and saves the subscription for the viewer
 * (`POST /_svc/push/subscriptions`); `disable()` deletes it there and unsubscribes;
 * `status()` reads the browser's state and never prompts.
 */
import { api, failure } from "./store";
import type { PushStatus, ServicePush } from "./types";

const WORKER_PATH = "/_svc/sw.js";

function supported(): boolean {
  return typeof window !== "undefined" && window.isSecureContext && "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

/** The relay worker's registration for this origin, if the page has one. */
async function registration(): Promise<ServiceWorkerRegistration | undefined> {
  const found = await navigator.serviceWorker.getRegistration("/");
  const worker = found?.active ?? found?.waiting ?? found?.installing;
  return worker && new URL(worker.scriptURL).pathname === WORKER_PATH ? found : undefined;
}

async function currentSubscription(): Promise<PushSubscription | null> {
  const found = await registration();
  return found ? found.pushManager.getSubscription() : null;
}

/** The application server key as bytes (what `subscribe` compares with an existing subscription's). */
function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const std = base64url.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(std + "=".repeat((4 - (std.length % 4)) % 4)), (ch) => ch.charCodeAt(0));
}

function sameKey(subscription: PushSubscription, key: Uint8Array): boolean {
  const held = subscription.options.applicationServerKey;
  if (!held) return false;
  const bytes = new Uint8Array(held);
  return bytes.length === key.length && bytes.every((b, i) => b === key[i]);
}

async function status(): Promise<PushStatus> {
  if (!supported()) return "unsupported";
  if (Notification.permission === "denied") return "denied";
  if (Notification.permission === "default") return "prompt";
  return (await currentSubscription()) ? "enabled" : "disabled";
}

async function enable(): Promise<PushStatus> {
  if (!supported()) throw failure("push_unsupported", "This browser cannot receive push notifications here (it needs service workers, the Push API and a secure origin).");
  // Asked first, so an app that cannot use push (or an anonymous viewer) is refused before any prompt.
  const { public_key: publicKey } = await api<{ public_key: string }>("GET", "/_svc/push");
  const permission = Notification.permission === "granted" ? "granted" : await Notification.requestPermission();
  if (permission !== "granted") throw failure("push_permission_denied", "The browser's notification permission was not granted.", { details: { permission } });
  await navigator.serviceWorker.register(WORKER_PATH, { scope: "/" });
  const ready = await navigator.serviceWorker.ready;
  const key = keyBytes(publicKey);
  let subscription = await ready.pushManager.getSubscription();
  // A subscription made with another key (the relay's key changed) cannot be pushed to: start again.
  if (subscription && !sameKey(subscription, key)) {
    await subscription.unsubscribe();
    subscription = null;
  }
  subscription ??= await ready.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  await api("POST", "/_svc/push/subscriptions", subscription.toJSON());
  return "enabled";
}

async function disable(): Promise<PushStatus> {
  if (!supported()) return "unsupported";
  const subscription = await currentSubscription();
  if (subscription) {
    await api("DELETE", "/_svc/push/subscriptions", { endpoint: subscription.endpoint });
    await subscription.unsubscribe();
  }
  return status();
}

export function pushOf(credentials: Promise<void>): ServicePush {
  return {
    enable: async () => {
      await credentials;
      return enable();
    },
    disable: async () => {
      await credentials;
      return disable();
    },
    status,
  };
}
