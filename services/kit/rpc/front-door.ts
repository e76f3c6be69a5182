import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeToHttpStatus, errorToJson, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { constants, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import type { Admission } from "../auth/enforce.js";
import { CLIENT_IP_HEADER, CLIENT_IP_PROOF_HEADER, plainAddress, type ClientKeys } from "../handler/client-address.js";

type NodeHandler = (request: Http2ServerRequest, response: Http2ServerResponse) => void;

export interface FrontDoorOptions {
  /** How long a caller may take to send the request of a unary or server-streaming call. */
  bodyTimeoutMs: number;
  /** The keys a gateway in another process proves its client's address with (`vouchClientAddress`). */
  clientKeys?: ClientKeys;
  /** The pf services the port serves, whose RPCs are admitted here first, and their enforcement. */
  admitting?: { services: readonly DescService[]; admission: Admission };
  /** A call refused here, before any interceptor sees it; `started` as `performance.now()` (the RPC metrics count it). */
  refused?: (method: DescMethod, error: ConnectError, started: number) => void;
}

/**
 * The RPC port's first look at a call, before Connect reads a byte of its body:
 *
 * - The client's address is the socket's peer, unless a gateway of another
 *   process forwards its client's address with that address's proof (only the
 *   platform's processes can make one): `pf-client-ip` from anyone else is replaced.
 * - The call is admitted as its interceptor will admit it (token, rules); a
 *   refusal is answered at once in the caller's protocol, so an anonymous
 *   caller's 1 MB body is never read, let alone decoded.
 * - A request that is one message must arrive within `bodyTimeoutMs`: a body
 *   sent a byte a second is not waited for.
 */
export function frontDoor(connect: NodeHandler, options: FrontDoorOptions): NodeHandler {
  const methods = new Map<string, DescMethod>();
  for (const service of options.admitting?.services ?? [])
    for (const method of service.methods) methods.set(`/${service.typeName}/${method.name}`, method);

  return (request, response) => {
    request.headers[CLIENT_IP_HEADER] = clientAddressOf(request, options.clientKeys);
    const method = methods.get(pathOf(request.url));
    if (!method || !options.admitting) return connect(request, response);
    if (method.methodKind === "unary" || method.methodKind === "server_streaming")
      bound(request, options.bodyTimeoutMs);
    const started = performance.now();
    let admitted;
    try {
      admitted = options.admitting.admission.admit(method, headersOf(request));
    } catch (error) {
      return refuse(request, response, refusal(method, error, started, options));
    }
    if (!(admitted instanceof Promise)) return connect(request, response);
    admitted.then(
      () => connect(request, response),
      (error: unknown) => refuse(request, response, refusal(method, error, started, options)),
    );
  };
}

/** The address a gateway vouched for, else the socket's peer; the proof goes no further. */
function clientAddressOf(request: Http2ServerRequest, keys: ClientKeys | undefined): string {
  const sent = request.headers[CLIENT_IP_HEADER];
  const proof = request.headers[CLIENT_IP_PROOF_HEADER];
  delete request.headers[CLIENT_IP_PROOF_HEADER];
  if (keys && typeof sent === "string" && typeof proof === "string" && keys.vouches(sent, proof)) return sent;
  return plainAddress(request.socket.remoteAddress ?? "");
}

/** A gateway's calls to another process's RPC port: the client address it forwards goes with its proof. */
export function vouchClientAddress(keys: ClientKeys): Interceptor {
  return (next) => (req) => {
    const ip = req.header.get(CLIENT_IP_HEADER);
    if (ip) req.header.set(CLIENT_IP_PROOF_HEADER, keys.proofOf(ip));
    return next(req);
  };
}

/** What a call the door did not admit is answered, told to `options.refused` first. */
function refusal(method: DescMethod, error: unknown, started: number, options: FrontDoorOptions): ConnectError {
  const refused = ConnectError.from(error);
  options.refused?.(method, refused, started);
  return refused;
}

function pathOf(url: string): string {
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

function headersOf(request: Http2ServerRequest): Headers {
  const header = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (name.startsWith(":") || value === undefined) continue;
    header.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return header;
}

/** Cancels the stream when its request has not fully arrived in time. */
function bound(request: Http2ServerRequest, timeoutMs: number): void {
  const timer = setTimeout(() => {
    if (!request.stream.destroyed) request.stream.close(constants.NGHTTP2_CANCEL);
  }, timeoutMs);
  timer.unref();
  const clear = () => clearTimeout(timer);
  request.once("end", clear);
  request.stream.once("close", clear);
}

/** A refusal as an answer in the caller's protocol: its status, headers and body (none: trailers-only). */
export interface ProtocolRefusal {
  status: number;
  header: Record<string, string>;
  body?: Uint8Array;
}

/**
 * The refusal in the caller's protocol (by its request's content type), as
 * Connect would write it: gRPC and gRPC-Web as a trailers-only answer, a
 * Connect stream as its end message, a Connect unary call as its JSON error
 * with the matching HTTP status. The RPC port and the gateway's Connect routes
 * answer with it before reading the body.
 */
export function refusalInProtocol(contentType: string, error: ConnectError): ProtocolRefusal {
  if (contentType.startsWith("application/grpc")) {
    const header: Record<string, string> = { "content-type": contentType };
    setTrailerStatus(new Headers(), error).forEach((value, name) => (header[name] = value));
    return { status: 200, header };
  }
  if (contentType.startsWith("application/connect+")) {
    const end = new TextEncoder().encode(JSON.stringify({ error: errorToJson(error, undefined) }));
    const body = new Uint8Array(5 + end.length);
    body[0] = 0b10; // the end-of-stream flag
    new DataView(body.buffer).setUint32(1, end.length);
    body.set(end, 5);
    return { status: 200, header: { "content-type": contentType }, body };
  }
  const body = errorToJsonBytes(error, undefined);
  return { status: codeToHttpStatus(error.code), header: { "content-type": "application/json" }, body };
}

/** The refusal written on the call's stream; the body is left unread, the stream ends with the answer. */
function refuse(request: Http2ServerRequest, response: Http2ServerResponse, error: ConnectError): void {
  if (response.stream.destroyed) return;
  const { status, header, body } = refusalInProtocol(String(request.headers["content-type"] ?? ""), error);
  response.stream.respond({ ":status": String(status), ...header }, { endStream: body === undefined });
  if (body) response.stream.end(body);
}
