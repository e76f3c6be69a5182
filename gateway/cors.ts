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

/** How a route answers browsers, as OpenAPI's `x-pf-cors` says it. */
export function corsKind(binding: Binding): "open" | "listed" | "platform" {
  const cors = accessOf(binding.method).cors;
  return cors === Cors.OPEN ? "open" : cors === Cors.LISTED ? "listed" : "platform";
}

/**
 * The origins a route with its own allow-list answers (`cors: CORS_LISTED`):
 * the comma-separated setting its rule names; undefined for other routes.
 */
export function listedOrigins(binding: Binding, env: Record<string, string | undefined>): string[] | undefined {
  const rule = accessOf(binding.method);
  if (rule.cors !== Cors.LISTED) return undefined;
  return (env[rule.corsSetting] ?? "")
    .split(",")
    .map((origin) => origin.trim())
    .filter((origin) => origin !== "");
}

/**
 * CORS per route: open routes answer every origin with `*` (never with
 * credentials, which bearer tokens do not need), listed routes the origins of
 * their own setting only, the others the platform's origins (PF_CORS_ORIGINS)
 * only. A request is decided by the route it is routed to; a preflight,
 * routed to the CORS plugin, by the route it asks about (its path and
 * Access-Control-Request-Method). With no origin configured and no open or
 * listed route, no request gets CORS headers.
 */
export async function registerCors(
  app: FastifyInstance,
  origins: readonly string[],
  bindings: readonly Binding[],
  routes: RouteTable,
  env: Record<string, string | undefined> = {},
): Promise<void> {
  const listed = new Map<Binding["method"], string[]>();
  for (const binding of bindings) {
    const own = listedOrigins(binding, env);
    if (own !== undefined) listed.set(binding.method, own);
  }
  if (origins.length === 0 && !bindings.some(corsOpen) && listed.size === 0) return;
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
  const asked = (request: FastifyRequest) => {
    const verb = request.method === "OPTIONS" ? request.headers["access-control-request-method"] : request.method;
    if (typeof verb !== "string") return undefined;
    return routes.bindingAt(request.headers.host ?? "", instanceOf(request), verb);
  };
  const optionsOf = (request: FastifyRequest): FastifyCorsOptions => {
    if (request.method !== "OPTIONS" && request.routeOptions.config.corsOpen === true) return open;
    const binding = listed.size > 0 || request.method === "OPTIONS" ? asked(request) : undefined;
    if (binding === undefined) return platform;
    if (corsOpen(binding)) return open;
    const own = listed.get(binding.method);
    return own === undefined ? platform : { ...platform, origin: own.length > 0 ? own : false };
  };
  await app.register(cors, { delegator: (request, callback) => callback(null, optionsOf(request)) });
}
