import type { ServerResponse } from "node:http";
import type { ServingCache } from "./cache.js";
import { hostnameOf } from "./hosts.js";
import { pages, sendPage } from "./pages.js";

/** Caddy's on-demand TLS `ask`: asked on a Host that is no site's, so no site can shadow it. */
export const TLS_ASK_PATH = "/.well-known/pf-host/tls-ask";

/**
 * Whether the edge may get a certificate for `?domain=`: 200 for a site's host or a verified custom domain, 404
 * otherwise, so nobody makes the edge ask a CA for names the platform does not serve.
 */
export async function askTls(res: ServerResponse, cache: ServingCache, url: string, head: boolean): Promise<void> {
  const domain = new URLSearchParams(url.slice(url.indexOf("?") + 1)).get("domain") ?? "";
  const hostname = hostnameOf(domain);
  const served =
    hostname !== "" && hostname === domain.toLowerCase().replace(/\.$/, "") && (await cache.serves(hostname));
  sendPage(res, served ? pages.served : pages.notFound, head);
}
