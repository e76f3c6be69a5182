import type { Principal } from "../../kit/auth/principal.js";
import { invalid } from "../../kit/handler/problem.js";

const NAMESPACE = /^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$/;

export function requireNamespace(namespace: string): string {
  if (namespace.length > 64 || !NAMESPACE.test(namespace)) {
    throw invalid("namespace", "namespace must be a service key, optionally followed by .name parts");
  }
  return namespace;
}

/** A service owns the namespace named by its key and every `<key>.…` below it. */
export function ownsNamespace(principal: Principal, namespace: string): boolean {
  const service = principal.service;
  return service !== undefined && (namespace === service || namespace.startsWith(`${service}.`));
}

/** Reading is allowed in a granted namespace: one the calling service owns or one listed in the token's ns claim. */
export function mayRead(principal: Principal, namespace: string): boolean {
  return ownsNamespace(principal, namespace) || principal.ns.includes(namespace);
}

/** If-Match as a revision: `"3"`, `W/"3"` or `3`; undefined when absent. */
