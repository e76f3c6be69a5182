import type { Principal } from "../../kit/auth/principal.js";

/** A service owns the namespace named by its key and every `<key>.…` below it. */
export function ownsNamespace(principal: Principal, namespace: string): boolean {
  const service = principal.service;
  return service !== undefined && (namespace === service || namespace.startsWith(`${service}.`));
}

/** Reading is allowed in a granted namespace: one the calling service owns or one listed in the token's ns claim. */
export function mayRead(principal: Principal, namespace: string): boolean {
  return ownsNamespace(principal, namespace) || principal.ns.includes(namespace);
}
