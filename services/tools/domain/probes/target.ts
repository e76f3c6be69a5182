import { parseAddress } from "../../../kit/outbound/addresses.js";
import { ipv6Block } from "../../../kit/handler/client-address.js";

/**
 * A host as a caller named it, as one target: lower-cased without a trailing dot, an address written in its
 * canonical form however it came (`127.1` and `2130706433` are `127.0.0.1`; IPv6 compressed, no brackets), so
 * one host is one target whatever its spelling.
 */
export function normalHost(host: string): string {
  const address = parseAddress(host.trim());
  if (address) return address.toString();
  return host.trim().toLowerCase().replace(/\.$/, "");
}

/**
 * What a probe is counted (the per-target throttle) and logged by: the address it reaches, an IPv6 one by its /64
 * (one server may hold the whole block), so many names for one host, or addresses hopped within one block, are
 * one target. A probe refused or unresolved reached no address: it is its host as named.
 */
export function targetKey(reached: string | undefined, host: string): string {
  if (reached === undefined) return `host:${host}`;
  return reached.includes(":") ? `ip:${ipv6Block(reached)}` : `ip:${reached}`;
}
