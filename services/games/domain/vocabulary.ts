import { ModStatus, TrustTier } from "../../../gen/pf/games/v1/mods_pb.js";
import type { Status } from "./installs.js";

const statuses: Record<Status, ModStatus> = {
  disabled: ModStatus.DISABLED,
  enabled: ModStatus.ENABLED,
  revoked: ModStatus.REVOKED,
};

const tiers: Record<string, TrustTier> = {
  unreviewed: TrustTier.UNREVIEWED,
  community: TrustTier.COMMUNITY,
  verified: TrustTier.VERIFIED,
  official: TrustTier.OFFICIAL,
};

/** A stored status as the proto enum. */
export const statusToProto = (status: string): ModStatus => statuses[status as Status];

/** A stored trust tier as the proto enum. */
export const tierToProto = (tier: string): TrustTier => tiers[tier] ?? TrustTier.UNSPECIFIED;

/** The status a filter names, "" for none (the contract lets only ModStatus's values through). */
export function statusWord(status: ModStatus): Status | "" {
  if (status === ModStatus.UNSPECIFIED) return "";
  return (Object.keys(statuses) as Status[]).find((word) => statuses[word] === status)!;
}
