import { domainToASCII } from "node:url";
import { PUBLIC_SUFFIXES } from "./public-suffixes.js";

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^\d+(\.\d+){3}$/;

/** The public-suffix rules by kind, built once from the bundled list. */
const plain = new Set<string>();
const wildcard = new Set<string>();
const exception = new Set<string>();
for (const rule of PUBLIC_SUFFIXES) {
  if (rule.startsWith("!")) exception.add(rule.slice(1));
  else if (rule.startsWith("*.")) wildcard.add(rule.slice(2));
  else plain.add(rule);
}

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

/** How many labels from the right form the host's public suffix (the list's algorithm, default rule `*`). */
function suffixLabels(labels: string[]): number {
  let longest = 1;
  for (let i = 0; i < labels.length; i++) {
    const name = labels.slice(i).join(".");
    const count = labels.length - i;
    // An exception's suffix is the rule without its first label, and wins over everything.
    if (exception.has(name)) return count - 1;
    if (plain.has(name)) longest = Math.max(longest, count);
    // `*.ck` makes every x.ck a suffix.
    if (i + 1 < labels.length && wildcard.has(labels.slice(i + 1).join("."))) longest = Math.max(longest, count);
  }
  return longest;
}

/** The host's eTLD+1 (registrable domain); undefined when the host is itself a public suffix. */
export function registrableDomain(host: string): string | undefined {
  const labels = host.split(".");
  const suffix = suffixLabels(labels);
  return labels.length > suffix ? labels.slice(-suffix - 1).join(".") : undefined;
}

export function isPublicSuffix(host: string): boolean {
  return registrableDomain(host) === undefined;
}

/** The host and each parent down to its registrable domain: the domains a rule covering it can name. */
export function hostChain(host: string): string[] {
  const registrable = registrableDomain(host);
  if (registrable === undefined) return [];
  const labels = host.split(".");
  const depth = registrable.split(".").length;
  return labels.slice(0, labels.length - depth + 1).map((_, i) => labels.slice(i).join("."));
}
