import { maxLength } from "./text.js";
import { invalid } from "./problem.js";

export type UrlScheme = "https" | "http";

/** Longest URL a service takes (browsers and CDNs agree on about this much). */
export const URL_MAX = 2000;

/** An absolute URL of one of `schemes` (https by default), at most URL_MAX characters; 400 naming the field otherwise. */
export function requireUrl(field: string, value: string, schemes: readonly UrlScheme[] = ["https"]): URL {
  maxLength(field, value, URL_MAX);
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || !schemes.some((scheme) => url.protocol === `${scheme}:`))
    throw invalid(field, `${field} must be an absolute ${schemes.join(" or ")} URL.`);
  return url;
}

/** As requireUrl, or "" when none is sent. */
export function optionalUrl(field: string, value: string, schemes: readonly UrlScheme[] = ["https"]): string {
  if (value !== "") requireUrl(field, value, schemes);
  return value;
}
