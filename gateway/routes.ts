import type { DescMethodUnary, Registry } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import type { FastifyInstance, RouteHandlerMethod } from "fastify";
import type { Logger } from "../services/kit/logger.js";
import { problemMessage } from "../services/kit/problem.js";
import { BODY_HOOKS } from "./bodies.js";
import { rpcName, type Binding } from "./bindings.js";
import { forwardedHeaders } from "./headers.js";
import { instanceOf, sendFailure, sendProblem } from "./problems.js";
import { requestMapper } from "./request.js";
import { resultRenderer, sendResult } from "./response.js";
import { routerPath } from "./template.js";

/** What a binding's handler calls through, fixed at build time. */
export interface RouteContext {
  readonly transport: Transport;
  /** The deadline of every call. */
  readonly timeoutMs: number;
  /** Types for Any and extensions in JSON. */
  readonly registry: Registry;
  readonly logger: Logger;
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

/** Methods a known path answers 405 to when no binding uses them. */
const ROUTED_VERBS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/**
 * Registers every binding at each of its mount points, then the 405 answers:
 * every routed method a known path has no binding for, with an Allow header.
 */
export function registerBindings(app: FastifyInstance, bindings: readonly Binding[], hostRouting: Record<string, string>, context: RouteContext): void {
  const paths = new Map<string, { url: string; point: MountPoint; verbs: Set<string> }>();
  for (const binding of bindings) {
    const build = BODY_HOOKS.find((hook) => hook.claims(binding))?.handler ?? jsonHandler;
    const handler = build(binding, context);
    for (const point of mountPoints(binding.key, hostRouting)) {
      const url = point.prefix + routerPath(binding.template);
      try {
        app.route({ method: binding.verb, url, handler, ...(point.constraints && { constraints: point.constraints }) });
      } catch (error) {
        throw new Error(`${rpcName(binding.method)}: cannot route ${binding.verb} ${url}: ${(error as Error).message}`);
      }
      const id = `${point.constraints?.host.source ?? ""} ${url}`;
      const known = paths.get(id) ?? { url, point, verbs: new Set<string>() };
      known.verbs.add(binding.verb);
      paths.set(id, known);
    }
  }
  for (const { url, point, verbs } of paths.values()) {
    const allow = [...verbs, ...(verbs.has("GET") ? ["HEAD"] : [])].join(", ");
    const handler: RouteHandlerMethod = async (request, reply) =>
      sendProblem(
        reply.header("allow", allow),
        problemMessage(405, "route.method_not_allowed", `${request.method} is not allowed on this path; it answers ${allow}.`),
        instanceOf(request),
      );
    const missing = ROUTED_VERBS.filter((verb) => !verbs.has(verb));
    if (missing.length > 0) app.route({ method: missing, url, handler, ...(point.constraints && { constraints: point.constraints }) });
  }
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
