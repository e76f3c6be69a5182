import cors, { type FastifyCorsOptions } from "@fastify/cors";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Cors } from "../gen/pf/v1/options_pb.js";
import { accessOf } from "../services/kit/auth/enforce.js";
import type { Binding } from "./bindings.js";
import { instanceOf } from "./problems.js";
import type { RouteTable } from "./route-table.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route answers any origin (cors.ts). */
    corsOpen?: boolean;
  }
}

/**
 * Request headers browsers may send cross-origin. Access-Control-Allow-Headers
 * has no prefix wildcard, so the X-PF-* headers the spec names are listed.
 */
export const CORS_ALLOWED_HEADERS = [
  "Authorization",
  "Content-Type",
  "Idempotency-Key",
  "If-Match",
  "If-None-Match",
  "Last-Event-ID",
  "X-Request-Id",
  "X-PF-Subject",
  "X-PF-Staff",
  "X-PF-Origin",
  "X-PF-Entitlements",
  "X-PF-Groups",
];

export const CORS_EXPOSED_HEADERS = ["ETag", "Location", "Retry-After", "X-Request-Id"];

/** Whether a binding's route answers any origin: its RPC's main rule says `cors: CORS_OPEN`. */
export function corsOpen(binding: Binding): boolean {
  return accessOf(binding.method).cors === Cors.OPEN;
}

/**
 * CORS per route: open routes answer every origin with `*` (never with
 * credentials, which bearer tokens do not need), the others the platform's
 * origins (PF_CORS_ORIGINS) only. A request is decided by the route it is
 * routed to; a preflight, routed to the CORS plugin, by the route it asks
 * about (its path and Access-Control-Request-Method). With no origin
 * configured and no open route, no request gets CORS headers.
 */
export async function registerCors(
  app: FastifyInstance,
  origins: readonly string[],
  bindings: readonly Binding[],
  routes: RouteTable,
): Promise<void> {
  if (origins.length === 0 && !bindings.some(corsOpen)) return;
  const platform: FastifyCorsOptions = {
    // false: no origin but the open routes' (and preflights of other routes are not answered).
    origin: origins.length > 0 ? [...origins] : false,
    methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
    // An OPTIONS that is not a full preflight is answered like one, not with a plain-text 400.
    strictPreflight: false,
  };
  const open: FastifyCorsOptions = { ...platform, origin: "*" };
  const opensTo = (request: FastifyRequest) => {
    if (request.method !== "OPTIONS") return request.routeOptions.config.corsOpen === true;
    const verb = request.headers["access-control-request-method"];
    if (typeof verb !== "string") return false;
    const asked = routes.bindingAt(request.headers.host ?? "", instanceOf(request), verb);
    return asked !== undefined && corsOpen(asked);
  };
  await app.register(cors, { delegator: (request, callback) => callback(null, opensTo(request) ? open : platform) });
}
