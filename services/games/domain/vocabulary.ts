import { ModStatus, TrustTier } from "../../../gen/pf/games/v1/mods_pb.js";
import { invalid } from "../../kit/handler/problem.js";
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

/** The status a filter names, "" for none (400 naming `status` for a value out of the enum). */
export function statusWord(status: ModStatus): Status | "" {
  if (status === ModStatus.UNSPECIFIED) return "";
  const found = (Object.keys(statuses) as Status[]).find((word) => statuses[word] === status);
  if (found === undefined)
    throw invalid("status", "status is MOD_STATUS_DISABLED, MOD_STATUS_ENABLED or MOD_STATUS_REVOKED");
  return found;
}
