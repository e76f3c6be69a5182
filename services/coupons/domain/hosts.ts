import { domainToASCII } from "node:url";
import { registrableDomain } from "../../kit/handler/public-suffix.js";

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^\d+(\.\d+){3}$/;

/**
 * A hostname as rules and lookups compare it: lower case, IDN labels in
 * punycode, no trailing dot; undefined when it is not a DNS hostname (IP
 * addresses, ports, empty labels, characters no hostname has). `www.` is kept:
 * a rule with subdomains covers it.
 */
export function normalizeHost(raw: string): string | undefined {
  const trimmed = raw.trim().replace(/\.$/, "");
  if (trimmed === "" || /[/:@?#[\]\\\s]/.test(trimmed)) return undefined;
  const host = domainToASCII(trimmed);
  if (host === "" || host.length > 253 || IPV4.test(host)) return undefined;
  return host.split(".").every((label) => LABEL.test(label)) ? host : undefined;
}

/** The host and each parent down to its registrable domain: the domains a rule covering it can name. */
export function hostChain(host: string): string[] {
  const registrable = registrableDomain(host);
  if (registrable === undefined) return [];
  const labels = host.split(".");
  const depth = registrable.split(".").length;
  return labels.slice(0, labels.length - depth + 1).map((_, i) => labels.slice(i).join("."));
}
