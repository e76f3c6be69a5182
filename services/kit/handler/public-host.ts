import { BlockList, isIPv4, isIPv6 } from "node:net";
import { invalid } from "./problem.js";
import { requireUrl, type UrlScheme } from "./urls.js";

/**
 * Addresses that are not the public internet: this host, the local network,
 * link-local, unspecified, multicast, reserved, documentation and ranges that
 * embed an IPv4 address another way (NAT64, 6to4, Teredo, IPv4-compatible:
 * refused whole, no public link is written so). IPv4-mapped IPv6 addresses are
 * matched against the IPv4 ranges by BlockList itself.
 */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of [
  ["::", 96], // unspecified, loopback, IPv4-compatible
  ["64:ff9b::", 96], // NAT64
  ["64:ff9b:1::", 48],
  ["100::", 64], // discard
  ["2001::", 32], // Teredo
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, "ipv6");

/** Names that never leave the local network: this host, mDNS, private-use zones. */
const LOCAL_NAMES = /(^|\.)(localhost|local|internal|home\.arpa)$/;

/**
 * Whether a URL's hostname (as `new URL` gives it: IPv4 in dotted decimal,
 * IPv6 in brackets) names a host of the public internet. A name is taken as
 * public unless it is a local name or has a single label; what it resolves to
 * is for whoever fetches it to check at connect time.
 */
export function isPublicHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (isIPv4(bare)) return !NOT_PUBLIC.check(bare, "ipv4");
  if (isIPv6(bare)) return !NOT_PUBLIC.check(bare, "ipv6");
  return host.includes(".") && !LOCAL_NAMES.test(host);
}

/**
 * As requireUrl, for a link a service may fetch one day: no user name or
 * password, and a public host (isPublicHost); 400 naming the field otherwise.
 */
export function requirePublicUrl(field: string, value: string, schemes: readonly UrlScheme[] = ["https"]): URL {
  const url = requireUrl(field, value, schemes);
  if (url.username !== "" || url.password !== "")
    throw invalid(field, `${field} must not carry a user name or password.`);
  if (!isPublicHost(url.hostname))
    throw invalid(field, `${field} must name a public host, not a local, private or reserved address.`);
  return url;
}
