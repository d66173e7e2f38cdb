// The outbound target guard (DESIGN §6, CONTRACT §3), checked in code because the local
// runtime would happily fetch a private address: every URL below is judged under the
// production and the development policy, and the address table covers the non-routable
// IPv4 and IPv6 ranges, the IPv6 forms that carry an IPv4 address inside, and public
// addresses on either side of each boundary.
import { describe, expect, it } from "vitest";
import { isNonRoutableAddress, refusedTarget } from "../../../src/effects/ssrf";

const production = { development: false };
const development = { development: true };

/** URLs refused in production and in development alike. */
const REFUSED_EVERYWHERE: string[] = [
  // private, loopback and reserved IPv4 literals, in https so only the host is at fault
  "https://10.0.0.1/", "https://10.255.255.255/", "https://172.16.0.1/", "https://172.31.255.254/",
  "https://192.168.1.1/", "https://127.0.0.2/", "https://0.0.0.0/", "https://100.64.0.1/",
  "https://100.127.255.254/", "https://169.254.169.254/latest/meta-data/", "https://192.0.0.192/",
  "https://192.0.2.1/", "https://198.18.0.1/", "https://198.19.255.255/", "https://224.0.0.1/",
  "https://239.255.255.250/", "https://240.0.0.1/", "https://255.255.255.255/",
  // public IPv4 literals: still no IP literals
  "https://8.8.8.8/", "https://1.1.1.1:443/",
  // IPv6 literals, public or not
  "https://[::]/", "https://[fc00::1]/", "https://[fd00:ec2::254]/",
  "https://[fe80::1]/", "https://[ff02::1]/", "https://[::ffff:10.0.0.1]/", "https://[::ffff:7f00:1]/",
  "https://[::127.0.0.1]/", "https://[64:ff9b::10.0.0.1]/", "https://[2002:0a00:0001::]/",
  "https://[2606:4700:4700::1111]/",
  // odd IPv4 notations the URL parser turns into 127.0.0.1 or 10.0.0.1
  "http://2130706433/", "https://2130706433/", "https://0x7f.1/", "https://0x7f000001/", "https://127.1/",
  "https://0177.0.0.1/", "https://127.0.0.1./", "https://10.1/", "https://%31%32%37.0.0.1/",
  "https://\uff11\uff12\uff17.0.0.1/", "http://127.1:9/", "http://[0:0:0:0:0:0:0:1]:9/", "http://127.0.0.1.:9/",
  // local and internal names, trailing dots and case included
  "https://localhost./", "https://app.localhost/",
  "https://printer.local/", "https://printer.local./", "https://db.internal/", "https://router.home.arpa/",
  "https://box.localdomain/", "https://intranet/", "https://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/",
  "http://localhost.:9/", "http://app.localhost:9/",
  // cloud metadata services by name
  "https://metadata.google.internal/computeMetadata/v1/", "https://metadata.google.internal./",
  "https://metadata/", "https://metadata.goog/", "https://metadata.azure.com/", "https://instance-data.ec2.internal/",
  // user info
  "https://user:pw@example.com/", "https://user@example.com/", "https://:pw@example.com/", "http://me@127.0.0.1:9/",
  // not http(s), or not a URL at all
  "not a url", "", "javascript:alert(1)", "file:///etc/passwd", "ftp://example.com/", "ftp://", "data:text/plain,x",
  "ws://example.com/", "https://", "https://exa mple.com/", "https://a..b.com/", "https://-bad-.example.com/",
  // plain http to a public host
  "http://example.com/hook",
];

/** URLs allowed in production and in development alike. */
const ALLOWED_EVERYWHERE: string[] = [
  "https://example.com/hook?x=1", "https://api.github.com", "https://Example.COM/Path#frag",
  "https://example.com./", "https://hooks.example.com:8443/in", "https://b\u00fccher.example/",
  "https://xn--bcher-kva.example/", "https://under_score.example.com/", "https://192-168-1-1.example.com/",
  "https://local.example.com/", "https://metadata.example.com/",
];

/** Loopback targets that development mode allows and production refuses. */
const DEVELOPMENT_ONLY: string[] = [
  "http://127.0.0.1:9999/x", "http://localhost:1/", "http://[::1]:2/", "https://127.0.0.1/", "https://localhost:8443/a?b=c",
  "https://[::1]/", "https://[::1]:8443/", "http://127.0.0.1/", "http://LOCALHOST:3000/", "http://localhost/", "https://LOCALHOST/",
];

describe("refusedTarget", () => {
  it.each(REFUSED_EVERYWHERE)("refuses %j in production and in development", (url) => {
    expect(refusedTarget(url, production)).not.toBeNull();
    expect(refusedTarget(url, development)).not.toBeNull();
  });

  it.each(ALLOWED_EVERYWHERE)("allows %j in production and in development", (url) => {
    expect(refusedTarget(url, production)).toBeNull();
    expect(refusedTarget(url, development)).toBeNull();
  });

  it.each(DEVELOPMENT_ONLY)("allows %j in development only", (url) => {
    expect(refusedTarget(url, development)).toBeNull();
    expect(refusedTarget(url, production)).not.toBeNull();
  });

  it.each([
    ["http://example.com/hook", production, "the target must use https"],
    ["http://example.com/hook", development, "the target must use https"],
    ["file:///etc/passwd", production, "the target must use https"],
    ["javascript:alert(1)", development, "the target must use https"],
    ["not a url", production, "the target is not a valid URL"],
    ["https://user:pw@example.com", production, "the target has user info"],
    ["http://me@127.0.0.1:9/", development, "the target has user info"],
    ["https://8.8.8.8/", production, "the target is an IP literal"],
    ["https://[2606:4700:4700::1111]/", production, "the target is an IP literal"],
    ["http://2130706433/", production, "the target is an IP literal"],
    ["https://0x7f.1/", production, "the target is an IP literal"],
    ["http://127.1:9/", development, "the target is an IP literal"],
    ["http://127.0.0.1:9999/x", production, "the target is an IP literal"],
    ["http://[::1]:2/", production, "the target is an IP literal"],
    ["http://localhost:1/", production, "the target is a non-routable host"],
    ["https://localhost./", development, "the target is a non-routable host"],
    ["https://metadata.google.internal/", production, "the target is a non-routable host"],
    ["https://printer.local/", production, "the target is a non-routable host"],
    ["https://metadata.azure.com/", production, "the target is a non-routable host"],
    ["https://a..b.com/", production, "the target host is not a valid DNS name"],
  ] as const)("gives %j under %o the reason %j", (url, policy, reason) => {
    expect(refusedTarget(url, policy)).toBe(reason);
  });
});

describe("isNonRoutableAddress", () => {
  it.each([
    // IPv4: each special-purpose block, at both of its ends
    "10.0.0.0", "10.255.255.255", "172.16.0.0", "172.31.255.255", "192.168.0.0", "192.168.255.255",
    "127.0.0.1", "127.255.255.255", "0.0.0.0", "0.255.255.255", "100.64.0.0", "100.127.255.255",
    "169.254.0.0", "169.254.169.254", "192.0.0.0", "192.0.0.255", "192.0.2.0", "192.0.2.255",
    "192.88.99.1", "198.18.0.0", "198.19.255.255", "198.51.100.7", "203.0.113.9", "224.0.0.0",
    "239.255.255.255", "240.0.0.0", "255.255.255.255",
    // IPv6
    "::1", "::", "fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fd00:ec2::254", "fe80::1",
    "febf:ffff::1", "fec0::1", "ff00::", "ff02::1", "100::1", "2001:db8::1", "2001::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2", "3fff::1", "5f00::1", "64:ff9b:1::1",
    // IPv6 carrying a private IPv4
    "::ffff:10.0.0.1", "::ffff:7f00:1", "::ffff:127.0.0.1", "::FFFF:A9FE:A9FE", "::127.0.0.1", "::a00:1",
    "::ffff:0:10.0.0.1", "64:ff9b::10.0.0.1", "64:ff9b::a9fe:a9fe", "2002:0a00:0001::", "2002:c0a8:0101::1",
    "2002:7f00:1::",
    // brackets, and what cannot be parsed (refused: fail closed)
    "[::1]", "", "localhost", "example.com", "010.0.0.1", "1.2.3", "1.2.3.4.5", "256.1.1.1", "fe80::1%eth0",
    "1:2:3:4:5:6:7:8:9", "1::2::3", ":::", "12345::", "1.2.3.4::", "::1.2.3", " 8.8.8.8",
  ])("%j is non-routable", (address) => {
    expect(isNonRoutableAddress(address)).toBe(true);
  });

  it.each([
    "8.8.8.8", "1.1.1.1", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "169.253.255.255",
    "169.255.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.0", "192.0.3.0", "192.167.255.255", "192.169.0.0",
    "198.17.255.255", "198.20.0.0", "223.255.255.255", "93.184.215.14",
    "2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001:82a::200e", "2001:200::1",
    "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:0808:0808::1", "[2606:4700::6810:84e5]",
  ])("%j is routable", (address) => {
    expect(isNonRoutableAddress(address)).toBe(false);
  });
});
