import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import { Agent, buildConnector, request, type Dispatcher } from "undici";
import { OutboundError } from "./errors.js";

/** The vetted address a connection to `hostname:port` goes to; throws `OutboundError` when it must not be made. */
export type Vet = (hostname: string, port: number) => Promise<{ address: string }>;

/**
 * An undici Agent whose every connection is vetted before a socket exists
 * (its `connect` hook): `vet` resolves the host and checks each answer, and
 * undici's own connector then connects to the vetted address, never a name
 * looked up again, so DNS cannot rebind between the check and the connection.
 * The Host header and TLS's server name stay the URL's host, so certificates
 * are checked against it. The connect timeout covers the TLS handshake.
 */
export function guardedAgent(vet: Vet, connectTimeoutMs: number): Agent {
  const connector = buildConnector({ timeout: connectTimeoutMs });
  return new Agent({
    connect: (options, callback) => {
      const port = Number(options.port || (options.protocol === "https:" ? 443 : 80));
      vet(options.hostname, port).then(
        ({ address }) =>
          connector({ ...options, hostname: address }, (error, socket) => {
            if (error === null) callback(null, socket);
            else if ((error as NodeJS.ErrnoException).code === "UND_ERR_CONNECT_TIMEOUT")
              callback(new OutboundError("timeout", `no connection within ${connectTimeoutMs} ms`), null);
            else callback(error, null);
          }),
        (error: Error) => callback(error, null),
      );
    },
    // The caller's total timeout bounds the wait for headers and body.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
}

/** Sends one GET (or HEAD) through `agent` and answers once the status and headers are in. */
export async function exchange(
  agent: Agent,
  url: URL,
  headers: Record<string, string>,
  signal: AbortSignal,
  method: "GET" | "HEAD" = "GET",
): Promise<Dispatcher.ResponseData> {
  try {
    return await request(url, { dispatcher: agent, method, headers, signal });
  } catch (error) {
    // Any fault before an answer (refused, reset, hung up, TLS) is a failure to connect.
    throw failureOf(error, signal, "connect");
  }
}

/** Drops an answer's body unread (a redirect's, one over the cap): its connection ends, and no error is left unheard. */
export function discard(response: Dispatcher.ResponseData): void {
  response.body.on("error", () => undefined).destroy();
}

/**
 * Reads a body, decompressed, counting bytes as they come: more than
 * `maxBytes` on the wire or after decompression stops the read (a gzip bomb
 * stops at the cap, an endless body too), and a Content-Length over it stops
 * before reading anything.
 */
export async function readBody(
  response: Dispatcher.ResponseData,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Buffer> {
  const declared = Number(response.headers["content-length"] ?? "0");
  if (declared > maxBytes) {
    discard(response);
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
    const stages = [capped("on the wire"), ...decoders(flatHeader(response.headers["content-encoding"])), collect];
    await (pipeline as (...streams: unknown[]) => Promise<void>)(response.body, ...stages, { signal });
  } catch (error) {
    discard(response);
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

/** A header's value, its repeats joined as HTTP lists them. */
export function flatHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}
