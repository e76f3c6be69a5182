import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * The address a host as written means, or undefined for a name. Odd IPv4
 * spellings are read as the address they mean, as a resolver or a browser
 * would: decimal `2130706433`, octal `0177.0.0.1`, hex `0x7f.1`, short `127.1`
 * (all 127.0.0.1). IPv6 may come in brackets, as `URL.hostname` gives it.
 */
export function parseAddress(host: string): Address | undefined {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host.replace(/\.$/, "");
  if (bare.includes("%")) return undefined; // a zone index names an interface: never a fetch target
  try {
    return ipaddr.parse(bare);
  } catch {
    return undefined;
  }
}

/** The IPv4 ranges reachable from outside: everything else (loopback, private, link-local, CGNAT, multicast, reserved, …) is refused. */
const PUBLIC_V4 = new Set(["unicast"]);

/**
 * Why an address must not be fetched (its range: `loopback`, `private`,
 * `linkLocal`, …), or undefined for a public one. IPv6 forms that carry an
 * IPv4 address (mapped, SIIT, NAT64 64:ff9b::/96, 6to4, Teredo's server and
 * client) are judged by the IPv4 addresses they carry; IPv4-compatible
 * (::a.b.c.d, deprecated) and local-use NAT64 (64:ff9b:1::/48) are refused
 * whole: only global unicast (2000::/3) outside special ranges passes.
 */
export function addressRefusal(address: Address | string): string | undefined {
  const parsed = typeof address === "string" ? parseAddress(address) : address;
  if (!parsed) return "not an IP address";
  if (parsed.kind() === "ipv4") {
    const range = parsed.range();
    return PUBLIC_V4.has(range) ? undefined : range;
  }
  const v6 = parsed as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) {
    const refused = embedded.map((v4) => addressRefusal(v4)).find((reason) => reason !== undefined);
    return refused === undefined ? undefined : `${v6.range()} of ${refused}`;
  }
  const range = v6.range();
  if (range === "unicast" && v6.match(GLOBAL_UNICAST)) return undefined;
  return range === "unicast" ? "outside global unicast (2000::/3)" : range;
}

const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3") as [ipaddr.IPv6, number];
const NAT64_WELL_KNOWN = ipaddr.parseCIDR("64:ff9b::/96") as [ipaddr.IPv6, number];

/** The IPv4 addresses an IPv6 address carries, for the forms that carry one. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const w = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  switch (address.range()) {
    case "ipv4Mapped": // ::ffff:a.b.c.d
    case "rfc6145": // ::ffff:0:a.b.c.d
      return [v4(w[6], w[7])];
    case "rfc6052":
      return address.match(NAT64_WELL_KNOWN) ? [v4(w[6], w[7])] : undefined;
    case "6to4": // 2002:aabb:ccdd::/48
      return [v4(w[1], w[2])];
    case "teredo": // 2001:0:<server>:<flags>:<port>:<client, inverted>
      return [v4(w[2], w[3]), v4(~w[6] & 0xffff, ~w[7] & 0xffff)];
    default:
      return undefined;
  }
}
