// externalHosts, embeds, embedAncestors, capabilities and the CSP lists built from them.
import { describe, expect, it } from "vitest";
import { parseManifest } from "../../../src/manifest";
import { errorOf, manifest, table, X } from "./helpers";

const EH = `${X}.externalHosts`;
const EM = `${X}.embeds`;
const EA = `${X}.embedAncestors`;
const CAP = `${X}.capabilities`;
/** The context of a manifest being deployed, where page origins must be public hosts. */
const DEPLOYING = { deploying: true };

describe("externalHosts", () => {
  const hosts = (list: unknown) => manifest({ externalHosts: list });
  table([
    { name: "hosts and a wildcard", input: hosts(["https://api.example.com", "https://*.tiles.example.org", "HTTPS://Data.Example.NET/"]), check: (m) => {
      expect(m.externalHosts).toEqual(["https://api.example.com", "https://*.tiles.example.org", "https://data.example.net"]);
      expect(m.csp.connectSrc).toEqual(["'self'", ...m.externalHosts]);
    } },
    { name: "punycode host", input: hosts(["https://xn--bcher-kva.example"]) },
    { name: "not an array", input: hosts("https://api.example.com"), code: "manifest_invalid", path: EH },
    { name: "over MAX_EXTERNAL_HOSTS", input: hosts(["https://a.example.com", "https://b.example.com"]), limits: { MAX_EXTERNAL_HOSTS: 1 }, code: "too_many_external_hosts", path: EH },
    { name: "not a string", input: hosts([42]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "http", input: hosts(["http://api.example.com"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "no scheme", input: hosts(["api.example.com"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "a path", input: hosts(["https://api.example.com/v1"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "a query", input: hosts(["https://api.example.com?x=1"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "a fragment", input: hosts(["https://api.example.com#x"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "a port", input: hosts(["https://api.example.com:8443"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "userinfo", input: hosts(["https://me@api.example.com"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "IPv4 literal", input: hosts(["https://1.2.3.4"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "IPv6 literal", input: hosts(["https://[::1]"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "single label", input: hosts(["https://localhost"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "wildcard over a TLD", input: hosts(["https://*.com"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "wildcard not leftmost", input: hosts(["https://a.*.example.com"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "bare wildcard", input: hosts(["https://*"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "non-ASCII host", input: hosts(["https://bücher.example"]), code: "external_host_invalid", path: `${EH}[0]` },
    { name: "duplicate after normalising", input: hosts(["https://api.example.com", "https://API.example.com"]), code: "external_host_invalid", path: `${EH}[1]` },
    { name: "the app's own origin", input: hosts(["https://notes.apps.example"]), context: { appOrigin: "https://notes.apps.example" }, code: "external_host_invalid", path: `${EH}[0]` },
    { name: "a wildcard over the app's own origin", input: hosts(["https://*.apps.example"]), context: { appOrigin: "https://notes.apps.example" }, code: "external_host_invalid", path: `${EH}[0]` },
    // Names the outbound guard refuses (src/effects/ssrf.ts) are not public hosts here either,
    // when a manifest is deployed (a stored one loaded again is not judged anew: below).
    ...[
      ["a .local name", "https://printer.local"],
      ["a wildcard over .internal", "https://*.corp.internal"],
      ["an .internal name", "https://db.internal"],
      ["a .home.arpa name", "https://router.home.arpa"],
      ["the .home.arpa zone itself", "https://*.home.arpa"],
      ["a .localdomain name", "https://box.localdomain"],
      ["a reverse-DNS name", "https://1.0.0.10.in-addr.arpa"],
      ["a metadata name", "https://metadata.google.internal"],
      ["another cloud's metadata name", "https://metadata.azure.com"],
      ["a private IPv4 literal", "https://10.0.0.1"],
      ["a mapped IPv6 literal", "https://[::ffff:7f00:1]"],
    ].map(([name, host]) => ({ name, input: hosts(["https://api.example.com", host]), context: DEPLOYING, code: "external_host_invalid" as const, path: `${EH}[1]` })),
  ]);
  it("a non-public name is refused with the guard's reason and the entry's path", () => {
    const err = errorOf(() => parseManifest(hosts(["https://*.corp.internal"]), {}, DEPLOYING));
    expect(err.message).toContain("must be a public host: the target is a non-routable host");
    expect(err.details?.path).toBe(`${EH}[0]`);
  });
  it("a stored manifest that names a non-public host still loads, so its app keeps working until it is deployed again", () => {
    const stored = manifest({ externalHosts: ["https://db.internal"], embeds: ["https://nas.local"], embedAncestors: ["https://intranet.corp.internal:8443"] });
    const loaded = parseManifest(stored);
    expect(loaded.externalHosts).toEqual(["https://db.internal"]);
    expect(loaded.embeds).toEqual(["https://nas.local"]);
    expect(loaded.csp.frameAncestors).toEqual(["https://intranet.corp.internal:8443"]);
    expect(errorOf(() => parseManifest(stored, {}, DEPLOYING)).code).toBe("external_host_invalid");
  });
});

describe("embeds", () => {
  const embeds = (list: unknown) => manifest({ embeds: list });
  table([
    { name: "frames", input: embeds(["https://www.youtube.com"]), check: (m) => expect(m.csp).toMatchObject({ frameSrc: ["https://www.youtube.com"], referrerPolicy: "strict-origin-when-cross-origin" }) },
    { name: "no embeds keeps no-referrer", input: manifest(), check: (m) => expect(m.csp.referrerPolicy).toBe("no-referrer") },
    { name: "over MAX_EMBEDS", input: embeds(["https://a.example.com", "https://b.example.com"]), limits: { MAX_EMBEDS: 1 }, code: "too_many_embeds", path: EM },
    { name: "http", input: embeds(["http://www.youtube.com"]), code: "embed_invalid", path: `${EM}[0]` },
    { name: "a path", input: embeds(["https://www.youtube.com/embed"]), code: "embed_invalid", path: `${EM}[0]` },
    { name: "duplicate", input: embeds(["https://www.youtube.com", "https://www.youtube.com"]), code: "embed_invalid", path: `${EM}[1]` },
    { name: "a .local name", input: embeds(["https://nas.local"]), context: DEPLOYING, code: "embed_invalid", path: `${EM}[0]` },
    { name: "a metadata name", input: embeds(["https://metadata.goog"]), context: DEPLOYING, code: "embed_invalid", path: `${EM}[0]` },
  ]);
});

describe("embedAncestors", () => {
  const anc = (list: unknown) => manifest({ embedAncestors: list });
  table([
    { name: "https origin and local dev origins", input: anc(["https://partner.example.com", "https://partner.example.com:8443", "http://localhost:3000", "http://127.0.0.1:5173"]), check: (m) => expect(m.csp.frameAncestors).toHaveLength(4) },
    { name: "a wildcard", input: anc(["https://*.example.com"]), code: "embed_invalid", path: `${EA}[0]` },
    { name: "http on a public host", input: anc(["http://partner.example.com"]), code: "embed_invalid", path: `${EA}[0]` },
    { name: "a path", input: anc(["https://partner.example.com/page"]), code: "embed_invalid", path: `${EA}[0]` },
    { name: "userinfo", input: anc(["https://me@partner.example.com"]), code: "embed_invalid", path: `${EA}[0]` },
    { name: "duplicate", input: anc(["https://partner.example.com", "https://partner.example.com/"]), code: "embed_invalid", path: `${EA}[1]` },
    { name: "an .internal name", input: anc(["https://partner.example.com", "https://intranet.corp.internal:8443"]), context: DEPLOYING, code: "embed_invalid", path: `${EA}[1]` },
    { name: "over MAX_EMBEDS", input: anc(["https://a.example.com", "https://b.example.com"]), limits: { MAX_EMBEDS: 1 }, code: "too_many_embeds", path: EA },
  ]);
});

describe("capabilities", () => {
  const caps = (list: unknown) => manifest({ capabilities: list });
  table([
    { name: "spec's three", input: caps(["camera", "microphone", "geolocation"]) },
    { name: "the wire's wider list", input: caps(["fullscreen", "clipboard-write", "web-share", "payment", "publickey-credentials-get"]), check: (m) => expect(m.csp.permissionsAllow).toEqual(["fullscreen", "clipboard-write", "web-share", "payment", "publickey-credentials-get"]) },
    { name: "not an array", input: caps("camera"), code: "manifest_invalid", path: CAP },
    { name: "unknown", input: caps(["camera", "telepathy"]), code: "capability_invalid", path: `${CAP}[1]` },
    { name: "wrong case", input: caps(["Camera"]), code: "capability_invalid", path: `${CAP}[0]` },
    { name: "duplicate", input: caps(["camera", "camera"]), code: "capability_invalid", path: `${CAP}[1]` },
  ]);
});

describe("cdn", () => {
  table([
    { name: "cdn widens script and style sources", input: manifest({ cdn: true }), check: (m) => expect(m.csp).toMatchObject({ scriptSrcExtra: ["https:"], styleSrcExtra: ["https:"] }) },
  ]);
});
