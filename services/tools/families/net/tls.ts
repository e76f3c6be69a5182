import { parseAddress } from "../../../kit/outbound/addresses.js";
import { runProbe } from "../../domain/probes/probe.js";
import { normalHost } from "../../domain/probes/target.js";
import { handshake } from "../../domain/probes/tls.js";
import type { InlineTool } from "../tool.js";

/**
 * net.tls: a TLS handshake with host:port naming the host (SNI), then closed: the server's certificate (subject,
 * issuer, alternative names, validity and days left, fingerprint), the protocol and cipher, and whether the
 * certificate is trusted for the host (an untrusted one is reported with the reason, not refused).
 */
export const tls: InlineTool = async (input, call) => {
  const host = normalHost(input.host as string);
  const port = (input.port as number | undefined) ?? 443;
  const timeoutMs = (input.timeout_ms as number | undefined) ?? 5_000;
  // An address names no server (SNI takes names only): the certificate is checked against the address.
  const servername = parseAddress(host) ? undefined : host;
  return runProbe(call, "net.tls", { host, port, over: "connect" }, async (address) => ({
    host,
    port,
    address,
    ...(await handshake(address, port, servername, timeoutMs, call.signal, call.ctx.clock.now())),
  }));
};
