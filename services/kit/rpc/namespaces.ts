import {
  getOption,
  ScalarType,
  type DescField,
  type DescMethod,
  type DescService,
  type Message,
} from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import type { Interceptor } from "@connectrpc/connect";
import { namespace_claim as namespaceClaimOption } from "../../../gen/pf/v1/options_pb.js";
import { callerKey } from "../auth/principal.js";
import { problem } from "../handler/problem.js";
import { replayed } from "./streams.js";

/** The namespace a field's value names: up to its first dot (`trade.summarize` is in `trade`), else all of it. */
export function namespaceOf(value: string): string {
  const dot = value.indexOf(".");
  return dot === -1 ? value : value.slice(0, dot);
}

/**
 * The token's `ns` claim held to what a request names (`namespace_claim`, proto/pf/v1/options.proto): placed after
 * the input guard, before the relations and the handler. A token without the claim is not limited by it; one with
 * it may name only the namespaces it lists, in every declared field the request sets. Checked at start: each field
 * is a string field of the route's request.
 */
export function namespaceClaims(services: readonly DescService[]): Interceptor {
  const claims = new Map<DescMethod, { refusal: string; fields: DescField[] }>();
  for (const service of services)
    for (const method of service.methods) {
      const claim = getOption(method, namespaceClaimOption);
      if (claim.fields.length === 0) continue;
      const fields = claim.fields.map((name) => {
        const field = method.input.fields.find((each) => each.name === name);
        if (field?.fieldKind !== "scalar" || field.scalar !== ScalarType.STRING)
          throw new Error(`${service.typeName}.${method.name}: namespace_claim field "${name}" is no string field`);
        return field;
      });
      if (!/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/.test(claim.refusal))
        throw new Error(`${service.typeName}.${method.name}: namespace_claim needs its refusal code`);
      claims.set(method, { refusal: claim.refusal, fields });
    }
  return (next) => async (req) => {
    const claim = claims.get(req.method);
    const { principal } = req.contextValues.get(callerKey);
    if (claim === undefined || principal.ns.length === 0) return next(req);
    if (!req.stream) {
      refuseOutside(req.method, claim, principal.ns, req.message);
      return next(req);
    }
    // A server-streaming call's one request message: read it, check it, and hand it on.
    const messages = req.message[Symbol.asyncIterator]();
    const first = await messages.next();
    if (!first.done) refuseOutside(req.method, claim, principal.ns, first.value);
    return next({ ...req, message: replayed(first, messages) });
  };
}

/**
 * The claim held to a namespace a handler found in data rather than in the request (a retried run's): the same
 * refusal, `code` being the route's declared one.
 */
export function refuseNamespaceOutsideClaim(granted: readonly string[], namespace: string, code: string): void {
  if (granted.length === 0 || granted.includes(namespace)) return;
  throw refusal(code, "namespace", namespace, granted);
}

function refusal(code: string, field: string, namespace: string, granted: readonly string[]) {
  return problem(403, code, `This token's ns claim does not include the namespace ${namespace}.`, {
    field,
    namespace,
    granted: [...granted],
  });
}

function refuseOutside(
  method: DescMethod,
  claim: { refusal: string; fields: DescField[] },
  granted: readonly string[],
  message: Message,
): void {
  const read = reflect(method.input, message);
  for (const field of claim.fields) {
    const value = read.get(field) as string;
    if (value === "") continue;
    const namespace = namespaceOf(value);
    if (!granted.includes(namespace)) throw refusal(claim.refusal, field.name, namespace, granted);
  }
}
