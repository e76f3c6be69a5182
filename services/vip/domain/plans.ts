import { PlanStatus, VersionState } from "../../../gen/pf/vip/v1/plans_pb.js";
import { maxLength } from "../../kit/handler/text.js";
import { invalid } from "../../kit/handler/problem.js";

export type Status = "draft" | "published" | "archived";

export const PLAN_STATUS: Record<Status, PlanStatus> = {
  draft: PlanStatus.DRAFT,
  published: PlanStatus.PUBLISHED,
  archived: PlanStatus.ARCHIVED,
};

/** The terms of one version. */
export interface Terms {
  name: string;
  description: string;
  tier: string;
  perkIds: string[];
}

/** The changes a PATCH sends; absent fields keep the base version's terms. */
export interface Changes {
  name?: string;
  description?: string;
  tier?: string;
  perkIds?: string[];
}

const MAX_PERKS = 50;

/** Billing's catalogue tiers are named tier_1, tier_2…; "" is tier_1. Billing refuses a tier it does not sell (422 at checkout). */
export function requireTier(field: string, value: string): string {
  if (value === "") return "tier_1";
  if (!/^tier_[1-9][0-9]?$/.test(value))
    throw invalid(field, `${field} is one of billing's catalogue tiers (tier_1, tier_2…)`);
  return value;
}

export function requireName(field: string, value: string): string {
  const name = maxLength(field, value.trim(), 100);
  if (name === "") throw invalid(field, `${field} is required (1–100 characters)`);
  return name;
}

export function requirePerkIds(field: string, ids: string[]): string[] {
  if (ids.length > MAX_PERKS) throw invalid(field, `${field} holds at most ${MAX_PERKS} perks`);
  if (new Set(ids).size !== ids.length) throw invalid(field, `${field} names a perk twice`);
  return ids;
}

/** Validated terms of a new version: the base's, with the changes sent (`perksField` names the perks where the request holds them). */
export function termsFrom(base: Terms | undefined, changes: Changes, perksField = "perks.perk_ids"): Terms {
  return {
    name: changes.name !== undefined ? requireName("name", changes.name) : (base?.name ?? ""),
    description:
      changes.description !== undefined
        ? maxLength("description", changes.description.trim(), 2000)
        : (base?.description ?? ""),
    tier: changes.tier !== undefined ? requireTier("tier", changes.tier) : (base?.tier ?? "tier_1"),
    perkIds: changes.perkIds !== undefined ? requirePerkIds(perksField, changes.perkIds) : (base?.perkIds ?? []),
  };
}

export function hasChanges(changes: Changes): boolean {
  return Object.values(changes).some((value) => value !== undefined);
}

/** Where a version stands: the draft, the current one, an earlier published one, or a draft replaced unpublished. */
export function versionState(
  plan: { currentVersion?: number | null; draftVersion?: number | null },
  version: number,
  published: boolean,
): VersionState {
  if (plan.draftVersion === version) return VersionState.DRAFT;
  if (plan.currentVersion === version) return VersionState.CURRENT;
  return published ? VersionState.SUPERSEDED : VersionState.DISCARDED;
}
