import type { Interceptor } from "@connectrpc/connect";
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";

const HEADER = "x-request-id";
const scope = new AsyncLocalStorage<string>();

/** The request id of the call being served, if any (read by the logger). */
export function currentRequestId(): string | undefined {
  return scope.getStore();
}

/** Server side: serves the call inside the scope of its request id (given, or new). */
export function requestIdScope(): Interceptor {
  return (next) => (req) => {
    let id = req.header.get(HEADER);
    if (!id) {
      id = randomUUID();
      req.header.set(HEADER, id);
    }
    return scope.run(id, () => next(req));
  };
}

/** Client side: a call made while serving another carries the same request id. */
export function propagateRequestId(): Interceptor {
  return (next) => (req) => {
    const id = scope.getStore();
    if (id && !req.header.has(HEADER)) req.header.set(HEADER, id);
    return next(req);
  };
}
