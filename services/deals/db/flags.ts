import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Flag, FlagOutcome, FlagReason, FlagSchema } from "../../../gen/pf/deals/v1/moderation_pb.js";
import type { EntityManager } from "@mikro-orm/postgresql";
import { newId } from "../../kit/handler/ids.js";
import { flagRaised } from "../events.js";
import { FlagRow } from "./entities.js";

export const FLAG_REASONS = {
  expired: FlagReason.EXPIRED,
  price_wrong: FlagReason.PRICE_WRONG,
  duplicate: FlagReason.DUPLICATE,
  spam: FlagReason.SPAM,
  other: FlagReason.OTHER,
  vote_ring: FlagReason.VOTE_RING,
} as const;
export type FlagReasonName = keyof typeof FLAG_REASONS;

export const FLAG_OUTCOMES = { dismissed: FlagOutcome.DISMISSED, actioned: FlagOutcome.ACTIONED } as const;

export const reasonName = (reason: FlagReason) =>
  (Object.keys(FLAG_REASONS) as FlagReasonName[]).find((name) => FLAG_REASONS[name] === reason);

export function flagToProto(row: FlagRow): Flag {
  return create(FlagSchema, {
    id: row.id,
    offerId: row.offerId,
    reporter: row.reporter,
    reason: FLAG_REASONS[row.reason as FlagReasonName],
    note: row.note,
    createdAt: timestampFromDate(row.createdAt),
    resolvedAt: row.resolvedAt ? timestampFromDate(row.resolvedAt) : undefined,
    resolvedBy: row.resolvedBy ?? "",
    outcome: row.outcome ? FLAG_OUTCOMES[row.outcome as keyof typeof FLAG_OUTCOMES] : FlagOutcome.UNSPECIFIED,
    resolution: row.resolution ?? "",
  });
}

/** Records an open flag (a person's report, or vote-ring detection's) and publishes deals.flag.raised for moderators. */
export async function raiseFlag(
  em: EntityManager,
  flag: { offerId: string; reporter: string; reason: string; note: string; at: Date },
): Promise<Flag> {
  const row = em.create(FlagRow, {
    id: newId("flg"),
    offerId: flag.offerId,
    reporter: flag.reporter,
    reason: flag.reason,
    note: flag.note,
    createdAt: flag.at,
    resolvedAt: null,
    resolvedBy: null,
    outcome: null,
    resolution: null,
  });
  await em.flush();
  const raised = flagToProto(row);
  await flagRaised(em, raised);
  return raised;
}
