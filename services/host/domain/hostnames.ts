import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import { isPublicSuffix, registrableDomain } from "../../kit/handler/public-suffix.js";

/**
 * Names reserved for special use (RFC 6761, RFC 6762, RFC 7686, RFC 8375, ICANN's `.internal`): no one can prove
 * control of them in the public DNS, so none is ever a custom domain, nor anything under one.
 */
export const SPECIAL_USE_DOMAINS = ["localhost", "local", "internal", "test", "example", "invalid", "onion", "arpa"];

const LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** A custom domain name as stored (lower case, punycode, no trailing dot), or why it can never be one. */
export type HostnameVerdict = { hostname: string; refused?: undefined } | { hostname?: undefined; refused: string };

/** Whether `hostname` is `domain` or lies under it. */
const within = (hostname: string, domain: string) => hostname === domain || hostname.endsWith(`.${domain}`);

/**
 * Normalises a domain name a caller sent (trimmed, lower case, IDN to punycode, no trailing dot) and refuses what no
 * tenant may claim: IP addresses in any spelling the URL parser accepts, names that are not valid DNS host names, a
 * single label, special-use names, a platform domain or anything under one, and a public suffix (`co.uk`,
 * `github.io`), which no one site owns.
 */
export function customHostname(input: string, platformDomains: readonly string[]): HostnameVerdict {
  const trimmed = input.trim().toLowerCase().replace(/\.$/, "");
  if (isIP(trimmed) !== 0 || trimmed.startsWith("[")) return { refused: "an IP address is not a domain name" };
  // WHATWG's host parser: IDN to punycode, and `0x7f.1` or `127.1` read as the IPv4 addresses they are.
  const hostname = domainToASCII(trimmed);
  if (isIP(hostname) !== 0) return { refused: "an IP address is not a domain name" };
  if (hostname === "" || hostname.length > 253) return { refused: "not a valid domain name" };
  const labels = hostname.split(".");
  for (const label of labels) {
    if (label.length > 63) return { refused: `the label "${label.slice(0, 20)}…" is longer than 63 characters` };
    if (!LABEL.test(label))
      return { refused: `"${label}" is not a valid label: letters, digits and inner hyphens only` };
  }
  const special = SPECIAL_USE_DOMAINS.find((domain) => within(hostname, domain));
  if (special !== undefined) return { refused: `.${special} names are reserved for special use` };
  if (labels.length === 1) return { refused: "a single label is not a domain name one can verify" };
  const platform = platformDomains.find((domain) => within(hostname, domain));
  if (platform !== undefined) return { refused: `${platform} and every name under it belong to the platform` };
  if (isPublicSuffix(hostname)) return { refused: `${hostname} is a public suffix, which no one site owns` };
  return { hostname };
}

/** Whether a custom domain is its registrable domain (an apex, `example.co.uk`), which cannot hold a CNAME. */
export function isApex(hostname: string): boolean {
  return registrableDomain(hostname) === hostname;
}

/** A DNS record the domain's owner creates: TXT, CNAME, A or AAAA. */
export interface DomainRecord {
  type: string;
  name: string;
  value: string;
}

/** The TXT record that proves control of a domain: `_pf-verify.<hostname>` = `pf-verify=<token>`. */
export function verificationRecord(hostname: string, token: string): DomainRecord {
  return { type: "TXT", name: `_pf-verify.${hostname}`, value: `pf-verify=${token}` };
}

/**
 * The records that route a custom domain to its site: a CNAME to the site's own host, or, for an apex (which
 * cannot hold a CNAME beside its SOA and NS), A/AAAA records of the edge's addresses (none when the operator set
 * none).
 */
export function routingRecords(hostname: string, siteHost: string, edgeAddresses: readonly string[]): DomainRecord[] {
  if (!isApex(hostname)) return [{ type: "CNAME", name: hostname, value: siteHost }];
  return edgeAddresses.map((address) => ({ type: isIP(address) === 6 ? "AAAA" : "A", name: hostname, value: address }));
}
