import { Resolver } from "node:dns/promises";
import { verificationRecord } from "./domain/hostnames.js";
import type { HostSettings } from "./settings.js";

/**
 * What a verification lookup found: the record, or why not. `gone` is an answer that the record is not there
 * (the name does not exist, holds no TXT, or not this value); a lookup that got no answer (a timeout, a failing
 * server) is not `gone`, so trouble with DNS never unserves a verified domain.
 */
export type VerificationLookup = { found: true } | { found: false; gone: boolean; reason: string };

/**
 * Looks up a domain's TXT verification record (`_pf-verify.<hostname>` = `pf-verify=<token>`) on the servers of
 * PF_HOST_DNS_SERVERS (the system's when unset), within PF_HOST_DNS_TIMEOUT_MS: two tries of a third of it each (the
 * resolver doubles the second), and a cancel at the deadline should several servers stretch it.
 */
export async function lookUpVerification(
  settings: Pick<HostSettings, "dnsServers" | "dnsTimeoutMs">,
  hostname: string,
  token: string,
): Promise<VerificationLookup> {
  const { name, value } = verificationRecord(hostname, token);
  const resolver = new Resolver({ timeout: Math.max(1, Math.floor(settings.dnsTimeoutMs / 3)), tries: 2 });
  if (settings.dnsServers.length > 0) resolver.setServers(settings.dnsServers);
  const deadline = setTimeout(() => resolver.cancel(), settings.dnsTimeoutMs);
  try {
    // A TXT record may be split in strings of 255 bytes: each record is their concatenation.
    const records = (await resolver.resolveTxt(name)).map((strings) => strings.join("").trim());
    if (records.includes(value)) return { found: true };
    return { found: false, gone: true, reason: `the TXT records of ${name} do not include "${value}"` };
  } catch (error) {
    return failed(name, (error as NodeJS.ErrnoException).code, settings.dnsTimeoutMs);
  } finally {
    clearTimeout(deadline);
  }
}

/** Why a lookup found nothing, by the resolver's error code. */
function failed(name: string, code: string | undefined, timeoutMs: number): VerificationLookup {
  switch (code) {
    case "ENOTFOUND":
      return { found: false, gone: true, reason: `${name} does not exist (NXDOMAIN)` };
    case "ENODATA":
      return { found: false, gone: true, reason: `${name} has no TXT record` };
    case "ETIMEOUT":
    case "ECANCELLED":
      return { found: false, gone: false, reason: `no DNS server answered for ${name} within ${timeoutMs} ms` };
    case "ESERVFAIL":
      return { found: false, gone: false, reason: `the DNS server failed to answer for ${name} (SERVFAIL)` };
    default:
      return { found: false, gone: false, reason: `the DNS lookup of ${name} failed (${code ?? "unknown error"})` };
  }
}
