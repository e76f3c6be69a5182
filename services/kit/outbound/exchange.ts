import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import { OutboundError } from "./errors.js";

/** Where one hop connects: the vetted address, never a name looked up again. */
export interface Destination {
  url: URL;
  address: string;
  family: 4 | 6;
  port: number;
}

/**
 * Sends one GET to the vetted address and answers once the status and headers
 * are in. The request's `lookup` answers only that address, so DNS cannot
 * rebind between the check and the connection; the Host header and TLS's
 * server name stay the URL's host, so certificates are checked against it.
 */
export function exchange(
  destination: Destination,
  headers: Record<string, string>,
  connectTimeoutMs: number,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const { url, address, family, port } = destination;
  const secure = url.protocol === "https:";
  const hostname = bare(url.hostname);
  const lookup: LookupFunction = (_name, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  return new Promise((resolve, reject) => {
    const request = (secure ? https : http).request({
      method: "GET",
      hostname,
      port,
      path: `${url.pathname}${url.search}`,
      headers,
      agent: false,
      lookup,
      servername: hostname === address || hostname.includes(":") ? undefined : hostname,
      signal,
    });
    const connectTimer = setTimeout(
      () => request.destroy(new OutboundError("timeout", `no connection within ${connectTimeoutMs} ms`)),
      connectTimeoutMs,
    );
    request.on("socket", (socket) =>
      socket.once(secure ? "secureConnect" : "connect", () => clearTimeout(connectTimer)),
    );
    request.on("response", (response) => {
      clearTimeout(connectTimer);
      resolve(response);
    });
    request.on("error", (error) => {
      clearTimeout(connectTimer);
      // Any fault before an answer (refused, reset, hung up, TLS) is a failure to connect.
      reject(failureOf(error, signal, "connect"));
    });
    request.end();
  });
}

/**
 * Reads a body, decompressed, counting bytes as they come: more than
 * `maxBytes` on the wire or after decompression stops the read (a gzip bomb
 * stops at the cap, an endless body too), and a Content-Length over it stops
 * before reading anything.
 */
export async function readBody(response: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const declared = Number(response.headers["content-length"] ?? "0");
  if (declared > maxBytes) {
    response.destroy();
    throw new OutboundError("too_large", `Content-Length ${declared} is over the cap of ${maxBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  const capped = (what: string) =>
    async function* (source: AsyncIterable<Buffer>) {
      let size = 0;
      for await (const chunk of source) {
        size += chunk.length;
        if (size > maxBytes) throw new OutboundError("too_large", `over the cap of ${maxBytes} bytes ${what}`);
        yield chunk;
      }
    };
  const collect = async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of capped("decompressed")(source)) chunks.push(chunk);
  };
  try {
    const stages = [capped("on the wire"), ...decoders(response.headers["content-encoding"]), collect];
    await (pipeline as (...streams: unknown[]) => Promise<void>)(response, ...stages, { signal });
  } catch (error) {
    response.destroy();
    throw failureOf(error, signal, "protocol");
  }
  return Buffer.concat(chunks);
}

/** zlib streams undoing Content-Encoding, outermost last as the header lists them. */
function decoders(encoding: string | undefined): NodeJS.ReadWriteStream[] {
  const names = (encoding ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "" && name !== "identity");
  if (names.length > 2) throw new OutboundError("protocol", `too many content encodings: ${encoding ?? ""}`);
  return names.reverse().map((name) => {
    if (name === "gzip" || name === "x-gzip") return zlib.createGunzip();
    if (name === "deflate") return zlib.createInflate();
    if (name === "br") return zlib.createBrotliDecompress();
    throw new OutboundError("protocol", `unsupported content encoding ${name}`);
  });
}

/** The outbound failure an error of a hop stands for. */
export function failureOf(error: unknown, signal: AbortSignal, otherwise: "connect" | "protocol"): OutboundError {
  if (signal.aborted && signal.reason instanceof OutboundError) return signal.reason;
  if (error instanceof OutboundError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? "";
  const message = error instanceof Error ? error.message : String(error);
  if (code.startsWith("HPE_") || code.startsWith("Z_") || code.startsWith("ERR_ZLIB"))
    return new OutboundError("protocol", `malformed answer (${code})`);
  return new OutboundError(otherwise, code ? `${message} (${code})` : message);
}

/** A host without IPv6's brackets. */
export function bare(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}
