import { performance } from "node:perf_hooks";
import { connect, type Certificate, type PeerCertificate, type TLSSocket } from "node:tls";
import { ToolFailure } from "../../families/tool.js";
import { socketAttempt } from "./tcp.js";

const DAY_MS = 86_400_000;

/** What a TLS handshake showed of a server: its certificate and how the connection was made. */
export interface TlsReport {
  protocol: string;
  cipher: string;
  /** Whether the chain leads to a trusted root and the certificate names the host. */
  authorized: boolean;
  /** Why not, as OpenSSL or Node names it (`DEPTH_ZERO_SELF_SIGNED_CERT`, `ERR_TLS_CERT_ALTNAME_INVALID`…). */
  authorization_error: string | null;
  subject: Record<string, string>;
  issuer: Record<string, string>;
  subject_alt_names: string[];
  valid_from: string;
  valid_to: string;
  /** Whole days until it expires, from now (negative once it has). */
  days_left: number;
  serial_number: string;
  fingerprint_sha256: string;
  handshake_ms: number;
}

/**
 * A TLS handshake with `address` (an IP address: no lookup happens) and `port`, naming `servername` (SNI, and
 * the name the certificate is checked against; none for a host written as an address, checked against it), then
 * closed: nothing else is sent. An invalid certificate is reported, not refused. No handshake within `timeoutMs`,
 * or a server that does not speak TLS, fails the run.
 */
export function handshake(
  address: string,
  port: number,
  servername: string | undefined,
  timeoutMs: number,
  signal: AbortSignal,
  now: Date,
): Promise<TlsReport> {
  const started = performance.now();
  return socketAttempt<TlsReport, TLSSocket>(
    () => connect({ host: address, port, servername, rejectUnauthorized: false }),
    timeoutMs,
    signal,
    () => new ToolFailure("tools.probe.timeout", `No TLS handshake within ${timeoutMs} ms.`),
    (socket, done) => {
      socket.once("secureConnect", () => {
        const handshakeMs = Math.round((performance.now() - started) * 100) / 100;
        const certificate = socket.getPeerCertificate();
        if (Object.keys(certificate).length === 0)
          done.fail(new ToolFailure("tools.probe.failed", "The server showed no certificate."));
        else done.answer(reportOf(socket, certificate, handshakeMs, now));
      });
      socket.once("error", (error: NodeJS.ErrnoException) =>
        done.fail(new ToolFailure("tools.probe.failed", `No TLS handshake: ${error.code ?? error.message}.`)),
      );
    },
  );
}

function reportOf(socket: TLSSocket, certificate: PeerCertificate, handshakeMs: number, now: Date): TlsReport {
  const validTo = new Date(certificate.valid_to);
  const error = socket.authorizationError as Error | string | null;
  return {
    protocol: socket.getProtocol() ?? "",
    cipher: socket.getCipher().name,
    authorized: socket.authorized,
    authorization_error: socket.authorized ? null : String(error instanceof Error ? error.message : error),
    subject: names(certificate.subject),
    issuer: names(certificate.issuer),
    subject_alt_names: altNames(certificate.subjectaltname),
    valid_from: new Date(certificate.valid_from).toISOString(),
    valid_to: validTo.toISOString(),
    days_left: Math.floor((validTo.getTime() - now.getTime()) / DAY_MS),
    serial_number: certificate.serialNumber,
    fingerprint_sha256: certificate.fingerprint256,
    handshake_ms: handshakeMs,
  };
}

/** A distinguished name's attributes (`CN`, `O`…), a repeated one's values joined. */
function names(name: Certificate | undefined): Record<string, string> {
  // Typed as strings; a repeated attribute comes as an array.
  return Object.fromEntries(
    Object.entries((name ?? {}) as Record<string, string | string[]>).map(([key, value]) => [
      key,
      Array.isArray(value) ? value.join(", ") : value,
    ]),
  );
}

/** `DNS:a.example, IP Address:192.0.2.1` as its entries. */
function altNames(text: string | undefined): string[] {
  return (text ?? "")
    .split(/,\s*/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}
