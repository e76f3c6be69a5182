import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Flag, FlagOutcome, FlagReason, FlagSchema } from "../../../gen/pf/deals/v1/moderation_pb.js";
import { LockMode, type EntityManager, type FilterQuery } from "@mikro-orm/postgresql";
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

/** A reporter's open flag on an offer, if any. */
export function openFlagOf(em: EntityManager, offerId: string, reporter: string): Promise<FlagRow | null> {
  return em.findOne(FlagRow, { offerId, reporter, resolvedAt: null });
}

/** A flag locked for a change, inside the caller's transaction; null when there is none. */
export function lockFlag(em: EntityManager, id: string): Promise<FlagRow | null> {
  return em.findOne(FlagRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/** Writes a flag's resolution. */
export async function resolveFlag(
  em: EntityManager,
  row: FlagRow,
  resolution: { at: Date; by: string; outcome: string; reason: string },
): Promise<void> {
  Object.assign(row, {
    resolvedAt: resolution.at,
    resolvedBy: resolution.by,
    outcome: resolution.outcome,
    resolution: resolution.reason,
  });
  await em.flush();
}

/** Which flags the moderators' queue reads: open or resolved (or both), of a reason, of an offer. */
export interface FlagFilter {
  resolved?: boolean;
  reason?: string;
  offerId?: string;
}

/** Up to `rows` flags matching the filter, newest first, before the cursor's id. */
export function flagsPage(
  em: EntityManager,
  filter: FlagFilter,
  before: string | undefined,
  rows: number,
): Promise<FlagRow[]> {
  const where: FilterQuery<FlagRow> = {
    ...(filter.resolved === false ? { resolvedAt: null } : filter.resolved ? { resolvedAt: { $ne: null } } : {}),
    ...(filter.reason ? { reason: filter.reason } : {}),
    ...(filter.offerId ? { offerId: filter.offerId } : {}),
    ...(before !== undefined ? { id: { $lt: before } } : {}),
  };
  return em.find(FlagRow, where, { orderBy: { id: "desc" }, limit: rows });
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
