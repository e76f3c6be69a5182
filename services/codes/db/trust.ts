import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type AppTrust, AppTrustSchema, TrustTier } from "../../../gen/pf/codes/v1/releases_pb.js";
import { AppTrustRow } from "./entities.js";

/** Tiers as the database writes them. */
const TIERS: Record<string, TrustTier> = {
  unreviewed: TrustTier.UNREVIEWED,
  reviewed: TrustTier.REVIEWED,
  verified: TrustTier.VERIFIED,
  flagged: TrustTier.FLAGGED,
};

/** A tier's name in the database, or undefined for UNSPECIFIED and unknown numbers. */
export function tierName(tier: TrustTier): string | undefined {
  return Object.keys(TIERS).find((name) => TIERS[name] === tier);
}

/** An app's trust as answered: unreviewed while staff never set it. */
export async function trustOf(em: EntityManager, app: string): Promise<AppTrust> {
  const row = await em.findOne(AppTrustRow, { app });
  return create(AppTrustSchema, {
    app,
    tier: row ? TIERS[row.tier] : TrustTier.UNREVIEWED,
    note: row?.note ?? "",
    updatedAt: row ? timestampFromDate(row.updatedAt) : undefined,
  });
}

/** Records an app's trust tier (staff), replacing the previous one. */
export async function setTrust(
  em: EntityManager,
  trust: { app: string; tier: string; note: string; setBy: string; at: Date },
): Promise<void> {
  await em.upsert(AppTrustRow, {
    app: trust.app,
    tier: trust.tier,
    note: trust.note,
    setBy: trust.setBy,
    updatedAt: trust.at,
  });
}
