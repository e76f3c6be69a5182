import type { DescMethodUnary, Registry } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import type { FastifyInstance, RouteHandlerMethod } from "fastify";
import type { Logger } from "../services/kit/runtime/logger.js";
import { BODY_HOOKS } from "./bodies.js";
import { rpcName, type Binding } from "./bindings.js";
import { forwardedHeaders } from "./headers.js";
import { sendFailure } from "./problems.js";
import { requestMapper } from "./request.js";
import { resultRenderer, sendResult } from "./response.js";
import { routerPath } from "./template.js";

/** What a binding's handler calls through, fixed at build time. */
export interface RouteContext {
  readonly transport: Transport;
  /** The deadline of every unary call; event streams have none (they last until the RPC or the client ends them). */
  readonly timeoutMs: number;
  /** Types for Any and extensions in JSON. */
  readonly registry: Registry;
  readonly logger: Logger;
  /** How often an open event stream gets a keep-alive comment (default 15 s). */
  readonly heartbeatMs?: number;
  /** The event streams being served, ended when the gateway closes (they never end on their own). */
  readonly openStreams?: Set<AbortController>;
}

/** Where a service answers: under `/<key>` on every host, and at the root of each host routed to it. */
export interface MountPoint {
  readonly prefix: string;
  readonly constraints?: { host: RegExp };
}

export function mountPoints(key: string, hostRouting: Record<string, string>): MountPoint[] {
  const points: MountPoint[] = [{ prefix: `/${key}` }];
  for (const [host, target] of Object.entries(hostRouting)) {
    if (target === key) points.push({ prefix: "", constraints: { host: hostPattern(host) } });
  }
  return points;
}

/** The Host header of a routed host name, with any port. */
function hostPattern(host: string): RegExp {
  return new RegExp(`^${host.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(:\\d+)?$`, "i");
}

/** Which methods a path answers, for 405 Allow: what the router did not match. */
export type AllowedMethods = (host: string, path: string) => string[];

/**
 * Registers every binding at each of its mount points, and answers which
 * methods a path the router found nothing for does answer (405 instead of
 * 404). Decided after routing, never by routes of its own: a fixed path for
 * one method must not hide a variable one for another (`POST /pastes/bulk`
 * beside `PUT /pastes/{slug}`).
 */
export function registerBindings(app: FastifyInstance, bindings: readonly Binding[], hostRouting: Record<string, string>, context: RouteContext): AllowedMethods {
  const known: { pattern: RegExp; host?: RegExp; verb: string }[] = [];
  for (const binding of bindings) {
    const hook = BODY_HOOKS.find((each) => each.claims(binding));
    const handler = (hook?.handler ?? jsonHandler)(binding, context);
    for (const point of mountPoints(binding.key, hostRouting)) {
      const url = point.prefix + routerPath(binding.template);
      const route = (scope: FastifyInstance) => {
        try {
          scope.route({ method: binding.verb, url, handler, ...(point.constraints && { constraints: point.constraints }) });
        } catch (error) {
          throw new Error(`${rpcName(binding.method)}: cannot route ${binding.verb} ${url}: ${(error as Error).message}`);
        }
      };
      const parsers = hook?.parsers;
      if (parsers) {
        void app.register(async (scope) => {
          parsers(scope);
          route(scope);
        });
      } else {
        route(app);
      }
      known.push({ pattern: pathPattern(url), host: point.constraints?.host, verb: binding.verb });
    }
  }
  return (host, path) => {
    const verbs = new Set(known.filter((k) => (!k.host || k.host.test(host)) && k.pattern.test(path)).map((k) => k.verb));
    if (verbs.has("GET")) verbs.add("HEAD");
    return [...verbs];
  };
}

/** A router path (`/network/internal/modules/:p0/:p1`, `…/*`) as a pattern over request paths. */
function pathPattern(url: string): RegExp {
  const source = url
    .split("/")
    .map((part) => (part === "*" ? ".+" : part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}$`);
}

/** The handler of a unary binding: request → input message → RPC → JSON answer or problem. */
function jsonHandler(binding: Binding, context: RouteContext): RouteHandlerMethod {
  const toMessage = requestMapper(binding, context.registry);
  const render = resultRenderer(binding, context.registry);
  const method = binding.method as DescMethodUnary;
  const { transport, timeoutMs, logger } = context;
  return async (request, reply) => {
    try {
      const response = await transport.unary(method, undefined, timeoutMs, forwardedHeaders(request), toMessage(request));
      return sendResult(reply, response.header, render, response.message);
    } catch (error) {
      return sendFailure(request, reply, error, logger);
    }
  };
}
