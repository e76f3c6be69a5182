import { createHash } from "node:crypto";
import { OverlayScope } from "../../../gen/pf/tips/v1/overlays_pb.js";
import { invalid } from "../../kit/handler/problem.js";
import type { OverlayKindName } from "./overlay-configs.js";

/** Secrets are `ovk_` and 32 random bytes: high entropy, so one SHA-256 (no slow hash) keeps them unguessable at rest. */
export const SECRET_PREFIX = "ovk_";

/** What is stored of a secret, and what a presented one is looked up by. */
export function secretHash(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** What a minted token may read: at least one scope, each named once. */
export function requestedScopes(scopes: OverlayScope[]): Set<OverlayKindName> {
  const names = new Set<OverlayKindName>();
  for (const [index, scope] of scopes.entries()) {
    if (scope === OverlayScope.ALERTS) names.add("alerts");
    else if (scope === OverlayScope.GOALS) names.add("goals");
    else throw invalid(`scopes[${index}]`, "each scope is OVERLAY_SCOPE_ALERTS or OVERLAY_SCOPE_GOALS");
  }
  if (names.size === 0)
    throw invalid("scopes", "scopes names at least one of OVERLAY_SCOPE_ALERTS, OVERLAY_SCOPE_GOALS");
  return names;
}

export const SCOPES: Record<OverlayKindName, OverlayScope> = { alerts: OverlayScope.ALERTS, goals: OverlayScope.GOALS };

export function scopesOf(row: { scopeAlerts: boolean; scopeGoals: boolean }): OverlayScope[] {
  return [...(row.scopeAlerts ? [OverlayScope.ALERTS] : []), ...(row.scopeGoals ? [OverlayScope.GOALS] : [])];
}
