/**
 * Which URLs the relay may fetch when someone else chose them (DESIGN §6): webhook
 * targets, connections and their oauth2 token URLs, attachment fetches, push endpoints.
 * A manifest or a request must not be able to point the relay at its own network, a
 * cloud metadata service or anything else that is not the public internet. Production
 * Workers refuse private addresses themselves, but the local runtime does not (and a
 * guard left to the runtime is untested), so the relay decides here, in pure code:
 *
 * - `refusedTarget` judges the URL as written: a public https DNS name, no user info, no
 *   IP literal in any notation (the URL parser turns `2130706433`, `0x7f.1` or `127.1`
 *   into dotted form, so those are IP literals too), no local or internal names.
 *   Development mode (CONTRACT §3) adds exactly `127.0.0.1`, `localhost` and `[::1]` on
 *   any port over http or https, written that way and no other.
 * - `isNonRoutableAddress` judges an address a name resolved to; the outbound fetch
 *   (outbound-fetch.ts) refuses a host when any of its addresses is one.
 *
 * Both fail closed: what cannot be parsed is refused.
 */

export interface TargetPolicy {
  development: boolean;
}

/** The reasons a target is refused, worded for a delivery journal. */
export const TARGET_REFUSAL = {
  notAUrl: "the target is not a valid URL",
  notHttps: "the target must use https",
  userInfo: "the target has user info",
  ipLiteral: "the target is an IP literal",
  notADnsName: "the target host is not a valid DNS name",
  nonRoutableHost: "the target is a non-routable host",
  nonRoutableAddress: "the target resolves to a non-routable address",
} as const;

/** The loopback hosts development mode may reach, as the URL parser writes them. */
const DEVELOPMENT_LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Names that never lead to the public internet: special-use and private-use suffixes
 * (RFC 6761, 6762, 8375 and the names clouds give their internal networks).
 */
const NON_PUBLIC_SUFFIXES = ["localhost", "local", "internal", "localdomain", "home.arpa", "in-addr.arpa", "ip6.arpa"];

/** Cloud metadata services reachable by name (the rest are IP addresses or `*.internal`). */
const METADATA_HOSTS: ReadonlySet<string> = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata.azure.com",
  "metadata.tencentyun.com",
  "metadata.platformequinix.com",
  "metadata.packet.net",
]);

const DNS_LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/** Null when `url` may be fetched under `policy`; otherwise why not. */
export function refusedTarget(url: string, policy: TargetPolicy): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return TARGET_REFUSAL.notAUrl;
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return TARGET_REFUSAL.notHttps;
  if (parsed.username !== "" || parsed.password !== "") return TARGET_REFUSAL.userInfo;
  if (policy.development && isDevelopmentLoopbackHost(parsed.hostname) && writtenHost(url) === parsed.hostname) return null;
  const hostRefusal = refusedHost(parsed.hostname);
  if (hostRefusal !== null) return hostRefusal;
  if (parsed.protocol !== "https:") return TARGET_REFUSAL.notHttps;
  return null;
}

/**
 * Whether `hostname` (as `URL.hostname` gives it) is one of the loopback hosts that
 * development mode allows; the outbound fetch does not resolve those.
 */
export function isDevelopmentLoopbackHost(hostname: string): boolean {
  return DEVELOPMENT_LOOPBACK_HOSTS.has(hostname);
}

/** Whether an IP address (v4 or v6 text) is one an outbound fetch must never reach. */
export function isNonRoutableAddress(address: string): boolean {
  const v4 = parseIPv4(address);
  if (v4 !== null) return isNonRoutableIPv4(v4);
  const v6 = parseIPv6(address);
  if (v6 !== null) return isNonRoutableIPv6(v6);
  return true;
}

/** Why a parsed URL's host may not be fetched, or null for a public DNS name. */
function refusedHost(hostname: string): string | null {
  if (hostname.startsWith("[")) return TARGET_REFUSAL.ipLiteral;
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  const labels = name.split(".");
  // A numeric last label is an IPv4 address in some notation (no top-level domain is numeric).
  if (/^(\d+|0x[0-9a-f]*)$/i.test(labels[labels.length - 1])) return TARGET_REFUSAL.ipLiteral;
  if (name.length > 253 || !labels.every((label) => DNS_LABEL.test(label))) return TARGET_REFUSAL.notADnsName;
  if (labels.length < 2) return TARGET_REFUSAL.nonRoutableHost;
  if (NON_PUBLIC_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`))) return TARGET_REFUSAL.nonRoutableHost;
  if (METADATA_HOSTS.has(name)) return TARGET_REFUSAL.nonRoutableHost;
  return null;
}

/**
 * The host exactly as the URL text spells it, lowercased: the parser's canonical form
 * hides notations such as `127.1` or `[0:0::1]`, which development mode does not accept
 * in place of the loopback hosts. Follows the parser's own steps: tabs and newlines
 * dropped, leading and trailing spaces and controls trimmed, any run of slashes after
 * the scheme, user info up to the last `@`, the port after the first `:`.
 */
function writtenHost(url: string): string | null {
  const cleaned = url.replace(/[\t\n\r]/g, "").replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "");
  const match = /^[a-z][a-z0-9+.-]*:[/\\]*([^/\\?#]*)/i.exec(cleaned);
  if (match === null) return null;
  const authority = match[1].slice(match[1].lastIndexOf("@") + 1);
  const host = authority.startsWith("[") ? authority.slice(0, authority.indexOf("]") + 1) : authority.split(":")[0];
  return host.toLowerCase();
}

// ---- IPv4 ----

/** Special-purpose IPv4 blocks (IANA registry) that are not globally reachable. */
const NON_ROUTABLE_IPV4: ReadonlyArray<readonly [string, number]> = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // shared address space (CGNAT)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, where cloud metadata services live
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast (deprecated)
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, with the limited broadcast address
];

const IPV4_BLOCKS = NON_ROUTABLE_IPV4.map(([base, bits]) => {
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return { network: (parseIPv4(base)! & mask) >>> 0, mask };
});

/** Dotted decimal with four parts and no leading zeros (which some parsers read as octal). */
function parseIPv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

function isNonRoutableIPv4(address: number): boolean {
  return IPV4_BLOCKS.some(({ network, mask }) => ((address & mask) >>> 0) === network);
}

// ---- IPv6 ----

interface IPv6Block {
  network: bigint;
  mask: bigint;
}

function ipv6Block(base: string, bits: number): IPv6Block {
  const mask = ((1n << BigInt(bits)) - 1n) << BigInt(128 - bits);
  return { network: parseIPv6(base)! & mask, mask };
}

const inBlock = (address: bigint, block: IPv6Block) => (address & block.mask) === block.network;

/** Blocks whose last 32 bits are an IPv4 address that decides where the packet goes. */
const IPV6_WITH_TRAILING_IPV4 = [
  ipv6Block("::", 96), // IPv4-compatible (deprecated); also holds :: and ::1
  ipv6Block("::ffff:0:0", 96), // IPv4-mapped
  ipv6Block("::ffff:0:0:0", 96), // IPv4-translated (SIIT)
  ipv6Block("64:ff9b::", 96), // NAT64, well-known prefix
];
/** 6to4: the IPv4 address sits in bits 16–47. */
const IPV6_6TO4 = ipv6Block("2002::", 16);
/** Global unicast; everything outside it (ULA, link-local, multicast, discard…) is not public. */
const IPV6_GLOBAL_UNICAST = ipv6Block("2000::", 3);
/** Parts of global unicast that are not globally reachable. */
const IPV6_NON_GLOBAL = [
  ipv6Block("2001::", 23), // IETF protocol assignments, Teredo among them
  ipv6Block("2001:db8::", 32), // documentation
  ipv6Block("3fff::", 20), // documentation
];

function isNonRoutableIPv6(address: bigint): boolean {
  if (IPV6_WITH_TRAILING_IPV4.some((block) => inBlock(address, block))) return isNonRoutableIPv4(Number(address & 0xffffffffn));
  if (inBlock(address, IPV6_6TO4)) return isNonRoutableIPv4(Number((address >> 80n) & 0xffffffffn));
  if (!inBlock(address, IPV6_GLOBAL_UNICAST)) return true;
  return IPV6_NON_GLOBAL.some((block) => inBlock(address, block));
}

/**
 * RFC 4291 text (hex groups, one `::`, an optional dotted IPv4 tail), optionally in
 * brackets, as a 128-bit number. Zone ids and anything else are refused (null).
 */
function parseIPv6(text: string): bigint | null {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (!/^[0-9a-f:.]+$/i.test(bare)) return null;
  const halves = bare.split("::");
  if (halves.length > 2) return null;
  if (halves.length === 2 && halves[0].includes(".")) return null;
  const head = ipv6Words(halves[0]);
  const tail = halves.length === 2 ? ipv6Words(halves[1]) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const words = [...head, ...new Array<number>(missing).fill(0), ...tail];
  return words.reduce((value, word) => (value << 16n) | BigInt(word), 0n);
}

/** The 16-bit words of one side of `::`; a dotted IPv4 address may end it. */
function ipv6Words(text: string): number[] | null {
  if (text === "") return [];
  const groups = text.split(":");
  const words: number[] = [];
  for (const [i, group] of groups.entries()) {
    if (i === groups.length - 1 && group.includes(".")) {
      const v4 = parseIPv4(group);
      if (v4 === null) return null;
      words.push(Math.floor(v4 / 0x10000), v4 % 0x10000);
    } else if (/^[0-9a-f]{1,4}$/i.test(group)) {
      words.push(parseInt(group, 16));
    } else {
      return null;
    }
  }
  return words;
}
