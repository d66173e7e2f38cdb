/**
 * The shape of `window.service` that the inline bootstrap creates and the bundle fills in
 * (WIRE §4.2). Shared by both so the handover between them (the buffered calls and the
 * ready promise kept in a hidden `__svc` slot) is checked by the compiler.
 */

export type SessionKind = "owner" | "member" | "anonymous";
export type Visibility = "private" | "link" | "public";

/** What the server writes into the bootstrap's `data-svc` attribute. */
export interface BootConfig {
  slug: string;
  name: string;
  description: string | null;
  icon: string | null;
  visibility: Visibility;
  /** `{API_ORIGIN}/authorize`: session.login() adds `?app=<slug>&return=<url>`. */
  authorize: string;
}

export interface ServiceSession {
  kind: SessionKind;
  humanId: string | null;
  visitorId: string | null;
  displayName: string | null;
  login(): void;
  logout(): void;
}

export interface ServiceApp {
  slug: string;
  name: string;
  description: string | null;
  icon: string | null;
  visibility: Visibility;
}

export interface ServiceGlobal {
  ready: Promise<void>;
  session: ServiceSession;
  app: ServiceApp;
}

/** A call made before the bundle attached: member path and arguments. */
export type BufferedCall = [name: string, args: unknown[]];

/** The bootstrap's handover to the bundle; not enumerable, not part of the public API. */
export interface Internal {
  config: BootConfig;
  queue: BufferedCall[];
  resolve: () => void;
  attached: boolean;
}

export type BootstrappedService = ServiceGlobal & { __svc?: Internal };

declare global {
  interface Window {
    service?: BootstrappedService;
  }
}
