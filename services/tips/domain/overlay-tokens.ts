import { OverlayScope } from "../../../gen/pf/tips/v1/overlays_pb.js";
import type { OverlayKindName } from "./overlay-configs.js";

/** Secrets are `ovk_` and 32 random bytes: high entropy, so one SHA-256 (no slow hash) keeps them unguessable at rest. */
export const SECRET_PREFIX = "ovk_";

/** What a minted token may read, each scope once (the contract's rules: at least one, each alerts or goals). */
export function requestedScopes(scopes: OverlayScope[]): Set<OverlayKindName> {
  return new Set(scopes.map((scope) => (scope === OverlayScope.ALERTS ? "alerts" : "goals")));
}

export const SCOPES: Record<OverlayKindName, OverlayScope> = { alerts: OverlayScope.ALERTS, goals: OverlayScope.GOALS };

export function scopesOf(row: { scopeAlerts: boolean; scopeGoals: boolean }): OverlayScope[] {
  return [...(row.scopeAlerts ? [OverlayScope.ALERTS] : []), ...(row.scopeGoals ? [OverlayScope.GOALS] : [])];
}
