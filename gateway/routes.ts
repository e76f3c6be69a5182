import { getOption, type DescMessage, type DescMethodUnary } from "@bufbuild/protobuf";
import type { UnaryResponse } from "@connectrpc/connect";
import type { FastifyInstance, RouteHandlerMethod } from "fastify";
import { success_statuses as successStatuses } from "../gen/pf/v1/options_pb.js";
import { admissionHook, admittedRequest } from "./admission.js";
import { BODY_HOOKS, type BodyHook } from "./bodies.js";
import { rpcName, type Binding } from "./bindings.js";
import { corsOpen } from "./cors.js";
import { forwardedHeaders } from "./headers.js";
import { sendFailure } from "./problems.js";
import { requestMapper } from "./request.js";
import { resultRenderer, sendResult } from "./response.js";
import type { RouteContext } from "./route-context.js";
import { RouteTable } from "./route-table.js";
import { openApiPath, routerPath } from "./template.js";

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

/**
 * Registers every binding at each of its mount points, each admitted before
 * anything else (admission.ts), and answers the table of what was registered.
 * The routes of a hook with a scope of its own (bodies.ts) are registered in
 * that one scope, once it is set up.
 */
export function registerBindings(
  app: FastifyInstance,
  bindings: readonly Binding[],
  hostRouting: Record<string, string>,
  context: RouteContext,
  table = new RouteTable(),
): RouteTable {
  const scoped = new Map<BodyHook, ((scope: FastifyInstance) => void)[]>();
  for (const binding of bindings) {
    const hook = BODY_HOOKS.find((each) => each.claims(binding));
    const served = hook?.route?.(binding, context) ?? { handler: (hook?.handler ?? jsonHandler)(binding, context) };
    const onRequest = admissionHook(binding.method, context);
    const config = { corsOpen: corsOpen(binding), rpc: binding.method, streamsBody: hook?.streamsBody === true };
    for (const point of mountPoints(binding.key, hostRouting)) {
      const url = point.prefix + routerPath(binding.template);
      const route = (scope: FastifyInstance) => {
        try {
          const constraints = point.constraints && { constraints: point.constraints };
          // The route as its binding writes it names the request's span (tracing.ts).
          const named = { ...config, route: point.prefix + openApiPath(binding.template) };
          scope.route({ method: binding.verb, url, onRequest, ...served, config: named, ...constraints });
        } catch (error) {
          const why = (error as Error).message;
          throw new Error(`${rpcName(binding.method)}: cannot route ${binding.verb} ${url}: ${why}`, { cause: error });
        }
      };
      if (hook?.scope) scoped.set(hook, [...(scoped.get(hook) ?? []), route]);
      else route(app);
      table.add(binding, url, point.constraints?.host);
    }
  }
  for (const [hook, routes] of scoped) {
    void app.register(async (scope) => {
      await hook.scope!(scope, context);
      for (const route of routes) route(scope);
    });
  }
  return table;
}

/** The handler of a unary binding: request → input message → RPC → JSON answer or problem. */
function jsonHandler(binding: Binding, context: RouteContext): RouteHandlerMethod {
  const toMessage = requestMapper(binding, context.registry);
  const render = resultRenderer(binding, context.registry);
  const method = binding.method as DescMethodUnary;
  // The first declared success status, unless the handler answered another (kit/handler/status.ts).
  const status = getOption(method, successStatuses)[0] ?? 200;
  const { transport, timeoutMs, logger } = context;
  return async (request, reply) => {
    let response: UnaryResponse<DescMessage, DescMessage>;
    try {
      // The headers admission saw, and its outcome, which the call takes instead of admitting again.
      const admitted = admittedRequest(request);
      const header = admitted?.headers ?? forwardedHeaders(request);
      response = await transport.unary(method, undefined, timeoutMs, header, toMessage(request), admitted?.values);
    } catch (error) {
      return sendFailure(request, reply, error, logger);
    }
    // A status the handler set wrongly throws here: the error handler answers it as a logged 500.
    return sendResult(reply, status, response.header, render, response.message);
  };
}
