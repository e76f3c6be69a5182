import type { DescMethod } from "@bufbuild/protobuf";
import { cors as connectCors } from "@connectrpc/connect";
import cors, { type FastifyCorsOptions } from "@fastify/cors";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { Cors } from "../gen/pf/v1/options_pb.js";
import { accessOf } from "../services/kit/auth/enforce.js";
import type { Binding } from "./bindings.js";
import { instanceOf } from "./problems.js";
import type { RouteTable } from "./route-table.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route answers any origin (cors.ts): an open binding's, or a public document's. */
    corsOpen?: boolean;
    /** The RPC a binding's route calls: its rule decides the route's CORS without looking the route up again. */
    rpc?: DescMethod;
  }
}

/** The config of a route that is no binding but answers any origin: the OpenAPI and AsyncAPI documents. */
export const OPEN_TO_ANY_ORIGIN = { corsOpen: true };

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

/** The same, with what Connect and gRPC-Web clients send and read (connect-protocol-version, x-grpc-web, grpc-status, …). */
export const CONNECT_ALLOWED_HEADERS = unite(CORS_ALLOWED_HEADERS, connectCors.allowedHeaders);
export const CONNECT_EXPOSED_HEADERS = unite(CORS_EXPOSED_HEADERS, connectCors.exposedHeaders);

function unite(ours: readonly string[], theirs: readonly string[]): string[] {
  const known = new Set(ours.map((name) => name.toLowerCase()));
  return [...ours, ...theirs.filter((name) => !known.has(name.toLowerCase()))];
}

/** Whether a binding's route answers any origin: its RPC's main rule says `cors: CORS_OPEN`. */
export function corsOpen(binding: Pick<Binding, "method">): boolean {
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
export function listedOrigins(
  binding: Pick<Binding, "method">,
  env: Record<string, string | undefined>,
): string[] | undefined {
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
 * Access-Control-Request-Method). A Connect route (`connectPaths`: its path,
 * its RPC) is decided by its RPC's rule alike, and lets browsers send and read
 * the Connect and gRPC-Web headers. The public documents (routes with
 * `OPEN_TO_ANY_ORIGIN`, not bindings) answer every origin, their preflights of
 * GET too: API tools in a browser fetch them. With no origin configured, only
 * open and listed routes get CORS headers.
 */
export async function registerCors(
  app: FastifyInstance,
  origins: readonly string[],
  bindings: readonly Binding[],
  routes: RouteTable,
  env: Record<string, string | undefined> = {},
  connectPaths: ReadonlyMap<string, DescMethod> = new Map(),
): Promise<void> {
  const methods = [...bindings, ...[...connectPaths.values()].map((method) => ({ method }))];
  const listed = new Map<DescMethod, string[]>();
  for (const each of methods) {
    const own = listedOrigins(each, env);
    if (own !== undefined) listed.set(each.method, own);
  }
  // A preflight reaches the CORS plugin, not the route it asks about: the paths of open GETs as registered (the
  // documents'; a binding is found in the route table first).
  const openPaths = new Set<string>();
  app.addHook("onRoute", (route) => {
    if (route.config?.corsOpen === true && [route.method].flat().includes("GET")) openPaths.add(route.url);
  });
  const platform: FastifyCorsOptions = {
    // false: no origin but the open routes' (and preflights of other routes are not answered).
    origin: origins.length > 0 ? [...origins] : false,
    // Lists joined once as the plugin would join them on every request.
    methods: "GET, HEAD, POST, PUT, PATCH, DELETE",
    allowedHeaders: CORS_ALLOWED_HEADERS.join(", "),
    exposedHeaders: CORS_EXPOSED_HEADERS.join(", "),
    maxAge: 600,
    // An OPTIONS that is not a full preflight is answered like one, not with a plain-text 400.
    strictPreflight: false,
  };
  const open: FastifyCorsOptions = { ...platform, origin: "*" };
  const connect: FastifyCorsOptions = {
    ...platform,
    methods: connectCors.allowedMethods.join(", "),
    allowedHeaders: CONNECT_ALLOWED_HEADERS.join(", "),
    exposedHeaders: CONNECT_EXPOSED_HEADERS.join(", "),
  };
  /** The options of a route of this RPC, from those of its kind of route; made once per RPC and kind. */
  const decided = new Map<FastifyCorsOptions, Map<DescMethod, FastifyCorsOptions>>([
    [platform, new Map()],
    [connect, new Map()],
  ]);
  const byRule = (method: DescMethod, base: FastifyCorsOptions): FastifyCorsOptions => {
    const known = decided.get(base)!;
    let options = known.get(method);
    if (options === undefined) {
      const own = listed.get(method);
      if (corsOpen({ method })) options = { ...base, origin: "*" };
      else options = own === undefined ? base : { ...base, origin: own.length > 0 ? own : false };
      known.set(method, options);
    }
    return options;
  };
  const asked = (request: FastifyRequest) => {
    const verb = request.method === "OPTIONS" ? request.headers["access-control-request-method"] : request.method;
    if (typeof verb !== "string") return undefined;
    return routes.bindingAt(request.headers.host ?? "", instanceOf(request), verb);
  };
  const optionsOf = (request: FastifyRequest): FastifyCorsOptions => {
    const rpc = connectPaths.size > 0 ? connectPaths.get(instanceOf(request)) : undefined;
    if (rpc) return byRule(rpc, connect);
    if (request.method !== "OPTIONS") {
      const { corsOpen: anyOrigin, rpc: routed } = request.routeOptions.config;
      if (anyOrigin === true) return open;
      // A binding's route: the router found its binding already (a search of the route table costs every request).
      if (routed !== undefined) return byRule(routed, platform);
    }
    const binding = listed.size > 0 || request.method === "OPTIONS" ? asked(request) : undefined;
    if (binding !== undefined) return byRule(binding.method, platform);
    const verb = request.headers["access-control-request-method"];
    const readsDocument = request.method === "OPTIONS" && (verb === "GET" || verb === "HEAD");
    return readsDocument && openPaths.has(instanceOf(request)) ? open : platform;
  };
  await app.register(cors, { delegator: (request, callback) => callback(null, optionsOf(request)) });
}
