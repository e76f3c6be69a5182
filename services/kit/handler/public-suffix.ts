import { getDomain } from "tldts";

/**
 * The whole Public Suffix List (publicsuffix.org) as tldts bundles it, private
 * section included: `vercel.app`, `github.io` or `s3.amazonaws.com` are
 * suffixes like `co.uk`, so every shop hosted under one is a site of its own.
 * Hosts are given normalized (lower case, punycode, no trailing dot), so tldts
 * neither parses URLs nor second-guesses them.
 */
const OPTIONS = {
  allowPrivateDomains: true,
  extractHostname: false,
  validateHostname: false,
  mixedInputs: false,
  detectIp: false,
} as const;

/**
 * A normalized host's registrable domain (eTLD+1: `shop.example.co.uk` →
 * `example.co.uk`, `a.myshop.vercel.app` → `myshop.vercel.app`); undefined when
 * the host is itself a public suffix. A TLD the list lacks is a suffix (its
 * default rule `*`).
 */
export function registrableDomain(host: string): string | undefined {
  return getDomain(host, OPTIONS) ?? undefined;
}

/** Whether a normalized host is a public suffix, so no one site owns what lies under it. */
export function isPublicSuffix(host: string): boolean {
  return registrableDomain(host) === undefined;
}
