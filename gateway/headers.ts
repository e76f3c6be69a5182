import type { FastifyRequest } from "fastify";
import { acceptedRequestId } from "../services/kit/runtime/call.js";
import type { IncomingMessage } from "node:http";
import { CLIENT_IP_HEADER, plainAddress } from "../services/kit/handler/client-address.js";
import { requestTraceparent } from "./tracing.js";

/**
 * Request headers the spec gives meaning to, forwarded to the RPC (besides
 * every x-pf-*), and the Standard Webhooks signature headers provider
 * deliveries are authenticated by.
 */
const FORWARDED = new Set([
  "accept",
  "authorization",
  "idempotency-key",
  "if-match",
  "if-none-match",
  "last-event-id",
  "range",
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
]);

/** Response headers a handler may set that are copied to the HTTP response. */
export const COPIED_RESPONSE_HEADERS = ["etag", "location", "cache-control"] as const;

export const REQUEST_ID_HEADER = "x-request-id";

/** The client's `x-request-id` when it is a bounded token-like value, else a new one (the kit's rule). */
export function requestIdOf(request: IncomingMessage): string {
  const sent = request.headers[REQUEST_ID_HEADER];
  return acceptedRequestId(typeof sent === "string" ? sent : undefined);
}

/**
 * The headers of the RPC call: the forwarded ones, the request id (generated
 * by Fastify when absent) and the client's address (never the client's own
 * `pf-client-ip`, which is not forwarded).
 */
export function forwardedHeaders(request: FastifyRequest): Record<string, string> {
  const header: Record<string, string> = { [REQUEST_ID_HEADER]: request.id };
  const incoming = request.headers;
  for (const name in incoming) {
    if (!FORWARDED.has(name) && !name.startsWith("x-pf-")) continue;
    const value = incoming[name];
    if (value !== undefined) header[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  // The gateway's span, never the client's own header: the RPC's span is its child.
  const traceparent = requestTraceparent(request);
  if (traceparent) header.traceparent = traceparent;
  // Set last: nothing the client sends can stand in for its address.
  header[CLIENT_IP_HEADER] = plainAddress(request.ip);
  return header;
}
