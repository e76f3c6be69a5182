import { invalid, problem } from "../../kit/handler/problem.js";
import { isPublicSuffix } from "../../kit/handler/public-suffix.js";
import { normalizeHost } from "./hosts.js";

/** Which sites belong to a merchant: a host, optionally its subdomains, optionally only pages under a path. */
export interface DomainRule {
  domain: string;
  includeSubdomains: boolean;
  /** "" for the whole host, else `/segment…` without a trailing slash. */
  pathPrefix: string;
}

/** A rule as people write it: the domain and its path prefix. */
export const ruleKey = (rule: DomainRule) => `${rule.domain}${rule.pathPrefix}`;

/**
 * A rule as stored, or 400 naming the field; a rule on a public suffix (co.uk,
 * vercel.app) is 400 coupons.domain.public_suffix.
 */
export function normalizeRule(field: string, rule: DomainRule): DomainRule {
  const domain = normalizeHost(rule.domain);
  if (domain === undefined)
    throw invalid(`${field}.domain`, `${field}.domain must be a hostname such as shop.example.com.`);
  if (isPublicSuffix(domain)) {
    throw problem(
      400,
      "coupons.domain.public_suffix",
      `${domain} is a public suffix: a rule must name a domain someone can register, or one below it.`,
      {
        field: `${field}.domain`,
      },
    );
  }
  return {
    domain,
    includeSubdomains: rule.includeSubdomains,
    pathPrefix: normalizePath(rule.pathPrefix),
  };
}

/** A path prefix without its trailing slashes (its shape, a path of at most 200 characters, is declared). */
function normalizePath(raw: string): string {
  return raw.replace(/\/+$/, "");
}

/** Whether a rule covers a host, and a page path when one is known (undefined: a host-only lookup, which path rules never match). */
export function covers(rule: DomainRule, host: string, path: string | undefined): boolean {
  const hostMatches = rule.domain === host || (rule.includeSubdomains && host.endsWith(`.${rule.domain}`));
  if (!hostMatches) return false;
  if (rule.pathPrefix === "") return true;
  return path !== undefined && (path === rule.pathPrefix || path.startsWith(`${rule.pathPrefix}/`));
}

/** The most specific covering rule: the longest domain, then the longest path. */
export function bestRule<R extends DomainRule>(rules: R[], host: string, path: string | undefined): R | undefined {
  return rules
    .filter((rule) => covers(rule, host, path))
    .sort((a, b) => b.domain.length - a.domain.length || b.pathPrefix.length - a.pathPrefix.length)[0];
}
