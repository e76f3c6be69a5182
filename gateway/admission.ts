import type { DescMethod } from "@bufbuild/protobuf";
import type { ContextValues } from "@connectrpc/connect";
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import { admittedCall } from "../services/kit/auth/enforce.js";
import type { Caller, Principal } from "../services/kit/auth/principal.js";
import { PlainHeaders } from "../services/kit/rpc/plain-headers.js";
import { closeAfterAnswer } from "./connection.js";
import { forwardedHeaders } from "./headers.js";
import { sendFailure } from "./problems.js";
import type { RouteContext } from "./route-context.js";

/** What admission left for a request's RPC: its headers, and the admission the call takes instead of repeating it. */
export interface AdmittedRequest {
  readonly headers: Record<string, string>;
  readonly values: ContextValues;
  /** Who was admitted (the access log names it). */
  readonly principal: PrincipalKind;
}

type PrincipalKind = Principal["kind"];

/** How a refused request is answered. */
export type Refusal = (request: FastifyRequest, reply: FastifyReply, error: unknown) => void;

// Kept on the request, not in a WeakMap: an entry per request there is work for every garbage collection.
const ADMITTED = Symbol("pf.admitted");
type Admittable = FastifyRequest & { [ADMITTED]?: AdmittedRequest };

/** The headers and admission of a request its route's hook admitted. */
export function admittedRequest(request: FastifyRequest): AdmittedRequest | undefined {
  return (request as Admittable)[ADMITTED];
}

/**
 * The route-level onRequest hook that admits a request as its RPC will, with
 * the headers the RPC will get, before Fastify parses a body and before the
 * path and query are mapped: a caller without the right (no token, a forged
 * one, one the route refuses) gets the RPC's own refusal and learns nothing of
 * the route's shape. The RPC takes this admission (`admittedCall`) instead of
 * repeating it; a cached token is admitted without waiting. A refusal is
 * answered as a problem, or as `answer` writes it (connect.ts: in the caller's
 * RPC protocol), and its connection closes after it.
 */
export function admissionHook(
  method: DescMethod,
  context: Pick<RouteContext, "admission" | "logger">,
  answer: Refusal = (request, reply, error) => sendFailure(request, reply, error, context.logger),
): onRequestHookHandler {
  const { admission } = context;
  // Made once, not per request: the hook runs on every routed request.
  const refuse = (request: FastifyRequest, reply: FastifyReply, error: unknown) =>
    answer(request, closeAfterAnswer(request, reply), error);
  const admit = (request: FastifyRequest, headers: Record<string, string>, caller: Caller, done: () => void) => {
    (request as Admittable)[ADMITTED] = {
      headers,
      values: admittedCall(method, caller),
      principal: caller.principal.kind,
    };
    done();
  };
  return (request, reply, done) => {
    try {
      const headers = forwardedHeaders(request);
      const caller = admission.admit(method, new PlainHeaders(headers));
      if (caller instanceof Promise)
        caller.then(
          (found) => admit(request, headers, found, done),
          (error: unknown) => refuse(request, reply, error),
        );
      else admit(request, headers, caller, done);
    } catch (error) {
      refuse(request, reply, error);
    }
  };
}
