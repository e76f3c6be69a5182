import { addressRefusal, parseAddress } from "./addresses.js";
import { invalid } from "../handler/problem.js";
import { requireUrl, type UrlScheme } from "../handler/urls.js";

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
  // An address is judged as the outbound client judges it when it connects (kit/outbound/addresses.ts).
  const address = parseAddress(host);
  if (address) return addressRefusal(address) === undefined;
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
