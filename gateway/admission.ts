import type { DescMethod } from "@bufbuild/protobuf";
import type { onRequestHookHandler } from "fastify";
import { leaveBodyUnread } from "./connection.js";
import { forwardedHeaders } from "./headers.js";
import { sendFailure } from "./problems.js";
import type { RouteContext } from "./route-context.js";

/**
 * The route-level onRequest hook that admits a request as its RPC will, with
 * the headers the RPC will get, before Fastify parses a body and before the
 * path and query are mapped: a caller without the right (no token, a forged
 * one, one the route refuses) gets the RPC's own refusal and learns nothing of
 * the route's shape. The RPC admits the call again; the verifier's cache makes
 * that second look cheap, and a cached token is admitted without waiting.
 */
export function admissionHook(method: DescMethod, context: RouteContext): onRequestHookHandler {
  const { admission, logger } = context;
  return (request, reply, done) => {
    const refuse = (error: unknown) => {
      sendFailure(request, leaveBodyUnread(request, reply), error, logger);
    };
    try {
      const admitted = admission.admit(method, new Headers(forwardedHeaders(request)));
      if (admitted instanceof Promise) admitted.then(() => done(), refuse);
      else done();
    } catch (error) {
      refuse(error);
    }
  };
}
