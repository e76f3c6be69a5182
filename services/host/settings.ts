import { Resolver } from "node:dns/promises";
import { isIP } from "node:net";
import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The static-hosting service's own settings, read once from the environment (documented in README.md). */
export interface HostSettings {
  /** Sites are served at <slug>.<this> (PF_HOST_SITES_DOMAIN, default `localhost`: browsers and curl resolve *.localhost to loopback). */
  sitesDomain: string;
  /** Port of the sites' own listener, which shares no origin with the API (PF_HOST_SITES_PORT, default 8090; 0 picks a free one). */
  sitesPort: number;
  /** Domains of the platform, never a custom domain nor under one (PF_HOST_PLATFORM_DOMAINS, comma-separated; the sites domain always is). */
  platformDomains: string[];
  /** DNS servers asked for TXT verification, `host[:port]` comma-separated (PF_HOST_DNS_SERVERS; default the system's). */
  dnsServers: string[];
  /** How long one verification's DNS lookup may take (PF_HOST_DNS_TIMEOUT_MS, default 5000). */
  dnsTimeoutMs: number;
  /** How often each verified custom domain's TXT record is checked again (PF_HOST_REVERIFY_EVERY_MS, default 6 h). */
  reverifyEveryMs: number;
  /** The A records a custom apex domain points at: the edge's addresses (PF_HOST_EDGE_ADDRESSES, comma-separated; none by default). */
  edgeAddresses: string[];
  /** A new project's quota (PF_HOST_DEFAULT_STORAGE_BYTES 1 GiB, _DEPLOY_FILES 10000, _DEPLOY_BYTES 256 MiB, _FILE_BYTES 25 MiB, _SITES 10). */
  defaultQuota: {
    storageBytes: number;
    deployFiles: number;
    deployBytes: number;
    fileBytes: number;
    sites: number;
  };
  /** How long a call to network (its staff list) may take (PF_HOST_NETWORK_TIMEOUT_MS, default 2000). */
  networkTimeoutMs: number;
  /** How often unreferenced blobs are swept (PF_HOST_SWEEP_EVERY_MS, default 600000). */
  sweepEveryMs: number;
  /** How old an unreferenced blob must be before it is swept: longer than any upload (PF_HOST_BLOB_GRACE_MS, default 6 h). */
  blobGraceMs: number;
}

const list = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((each) => each.trim().toLowerCase())
    .filter((each) => each !== "");

export function hostSettings(config: Config): HostSettings {
  const env = config.env;
  const sitesDomain = (env.PF_HOST_SITES_DOMAIN ?? "localhost").trim().toLowerCase().replace(/\.$/, "");
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(sitesDomain))
    throw new Error(`PF_HOST_SITES_DOMAIN "${sitesDomain}" is not a domain name`);
  const dnsServers = list(env.PF_HOST_DNS_SERVERS);
  try {
    // The resolver takes IP addresses with an optional port only: checked at start, never on a lookup.
    if (dnsServers.length > 0) new Resolver().setServers(dnsServers);
  } catch {
    throw new Error(`PF_HOST_DNS_SERVERS must list IP addresses with an optional port, got "${dnsServers.join(",")}"`);
  }
  const edgeAddresses = list(env.PF_HOST_EDGE_ADDRESSES);
  const notAddress = edgeAddresses.find((address) => isIP(address) === 0);
  if (notAddress !== undefined) throw new Error(`PF_HOST_EDGE_ADDRESSES: "${notAddress}" is not an IP address`);
  return {
    sitesDomain,
    sitesPort: wholeSetting(env, "PF_HOST_SITES_PORT", 8090, 0),
    platformDomains: [...new Set([sitesDomain, ...list(env.PF_HOST_PLATFORM_DOMAINS)])],
    dnsServers,
    dnsTimeoutMs: wholeSetting(env, "PF_HOST_DNS_TIMEOUT_MS", 5_000, 10),
    reverifyEveryMs: wholeSetting(env, "PF_HOST_REVERIFY_EVERY_MS", 6 * 3600_000, 10),
    edgeAddresses,
    defaultQuota: {
      storageBytes: wholeSetting(env, "PF_HOST_DEFAULT_STORAGE_BYTES", 1024 ** 3, 0),
      deployFiles: wholeSetting(env, "PF_HOST_DEFAULT_DEPLOY_FILES", 10_000, 0),
      deployBytes: wholeSetting(env, "PF_HOST_DEFAULT_DEPLOY_BYTES", 256 * 1024 ** 2, 0),
      fileBytes: wholeSetting(env, "PF_HOST_DEFAULT_FILE_BYTES", 25 * 1024 ** 2, 0),
      sites: wholeSetting(env, "PF_HOST_DEFAULT_SITES", 10, 0),
    },
    networkTimeoutMs: wholeSetting(env, "PF_HOST_NETWORK_TIMEOUT_MS", 2_000, 10),
    sweepEveryMs: wholeSetting(env, "PF_HOST_SWEEP_EVERY_MS", 600_000, 10),
    blobGraceMs: wholeSetting(env, "PF_HOST_BLOB_GRACE_MS", 6 * 3600_000, 0),
  };
}
