import type { DescMethod } from "@bufbuild/protobuf";
import type { ContextValues } from "@connectrpc/connect";
import type { FastifyRequest, onRequestHookHandler } from "fastify";
import { admittedCall } from "../services/kit/auth/enforce.js";
import type { Caller } from "../services/kit/auth/principal.js";
import { PlainHeaders } from "../services/kit/rpc/plain-headers.js";
import { closeAfterAnswer } from "./connection.js";
import { forwardedHeaders } from "./headers.js";
import { sendFailure } from "./problems.js";
import type { RouteContext } from "./route-context.js";

/** What admission left for a request's RPC: its headers, and the admission the call takes instead of repeating it. */
export interface AdmittedRequest {
  readonly headers: Record<string, string>;
  readonly values: ContextValues;
}

const admitted = new WeakMap<FastifyRequest, AdmittedRequest>();

/** The headers and admission of a request its route's hook admitted. */
export function admittedRequest(request: FastifyRequest): AdmittedRequest | undefined {
  return admitted.get(request);
}

/**
 * The route-level onRequest hook that admits a request as its RPC will, with
 * the headers the RPC will get, before Fastify parses a body and before the
 * path and query are mapped: a caller without the right (no token, a forged
 * one, one the route refuses) gets the RPC's own refusal and learns nothing of
 * the route's shape. The RPC takes this admission (`admittedCall`) instead of
 * repeating it; a cached token is admitted without waiting.
 */
export function admissionHook(method: DescMethod, context: RouteContext): onRequestHookHandler {
  const { admission, logger } = context;
  return (request, reply, done) => {
    const refuse = (error: unknown) => {
      sendFailure(request, closeAfterAnswer(request, reply), error, logger);
    };
    const admit = (headers: Record<string, string>, caller: Caller) => {
      admitted.set(request, { headers, values: admittedCall(method, caller) });
      done();
    };
    try {
      const headers = forwardedHeaders(request);
      const caller = admission.admit(method, new PlainHeaders(headers));
      if (caller instanceof Promise) caller.then((found) => admit(headers, found), refuse);
      else admit(headers, caller);
    } catch (error) {
      refuse(error);
    }
  };
}
