import { requirePublicUrl } from "../../kit/outbound/public-host.js";

/** Query parameters that only track the visitor; the same deal with or without them is one link. */
const TRACKING = /^(utm_.*|fbclid|gclid|mc_cid|mc_eid|ref|ref_src)$/i;

/**
 * The key that tells whether a link was already posted: http(s) only, host
 * lower-cased without `www.`, no fragment, no tracking parameters, the rest
 * of the query sorted, no trailing slash. The link itself is kept as sent.
 * A link with a user name or password, or to a host that is not public
 * (loopback, private, link-local…: isPublicHost), is refused naming the field.
 */
export function linkKey(field: string, link: string): string {
  const url = requirePublicUrl(field, link, ["http", "https"]);
  const host = url.hostname.toLowerCase().replace(/^www\./, "");
  const params = [...url.searchParams]
    .filter(([name]) => !TRACKING.test(name))
    .sort(([a, x], [b, y]) => (a === b ? x.localeCompare(y) : a.localeCompare(b)));
  const query = params.length ? `?${new URLSearchParams(params).toString()}` : "";
  const path = url.pathname.replace(/\/+$/, "");
  const port = url.port ? `:${url.port}` : "";
  return `${host}${port}${path}${query}`;
}
