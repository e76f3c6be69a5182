import type { Principal } from "../../kit/auth/principal.js";
import { namespaceOf } from "../../kit/rpc/namespaces.js";

/** Where a direct operation counts when it names none and its token gives no ns: neither a service nor a namespace. */
export const DIRECT_NAMESPACE = "direct";

/** A workflow run's namespace: its key's first segment (`trade.summarize_market_context` → `trade`). */
export const workflowNamespace = (workflow: string): string => namespaceOf(workflow);

/**
 * A direct operation's namespace: the one it names, else the token's first ns, else the calling service's key
 * (`svc:trade` → `trade`), else `direct`. The kit already refused a named namespace outside the token's ns claim.
 */
export function directNamespace(named: string, principal: Principal): string {
  if (named !== "") return named;
  if (principal.ns.length > 0) return principal.ns[0]!;
  if (principal.kind === "service" && principal.service) return principal.service;
  if (principal.kind === "service" && principal.sub.startsWith("svc:")) return principal.sub.slice(4);
  return DIRECT_NAMESPACE;
}
