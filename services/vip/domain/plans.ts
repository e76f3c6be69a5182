import { PlanStatus, VersionState } from "../../../gen/pf/vip/v1/plans_pb.js";

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

/**
 * The terms of a new version: the base's, with the changes sent, names and
 * descriptions trimmed. The contract holds what is sent to its rules (name
 * 1–100 characters and not blank, description 2000, a tier named tier_1,
 * tier_2…, at most 50 perks none twice); billing refuses a tier it does not
 * sell (422 at checkout). "" is tier_1.
 */
export function termsFrom(base: Terms | undefined, changes: Changes): Terms {
  return {
    name: changes.name !== undefined ? changes.name.trim() : (base?.name ?? ""),
    description: changes.description !== undefined ? changes.description.trim() : (base?.description ?? ""),
    tier: changes.tier !== undefined ? changes.tier || "tier_1" : (base?.tier ?? "tier_1"),
    perkIds: changes.perkIds ?? base?.perkIds ?? [],
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
