import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import {
  Availability,
  Condition,
  type Observation,
  ObservationSchema,
  type Offer,
  OfferSchema,
  OfferStatus,
  type Tally,
  TallySchema,
} from "../../../gen/pf/deals/v1/offers_pb.js";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { hotness } from "../../kit/handler/hotness.js";
import { tallyVotes } from "../domain/hotness.js";
import { EXPIRY, expiredAtOf, offerStatus } from "../domain/offers.js";
import { ObservationRow, OfferRow, ReviewRow } from "./entities.js";

const offerNotFound = () => problem(404, "offer.not_found", "There is no such offer.");

/** The offer, locked for the rest of the transaction when asked; 404 when missing. */
export async function offerById(em: EntityManager, id: string, lock = false): Promise<OfferRow> {
  const row = await em.findOne(OfferRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  if (!row) throw offerNotFound();
  return row;
}

/** The offer posted with this link (its key), known to exist (a duplicate found it). */
export function offerByLink(em: EntityManager, key: string): Promise<OfferRow> {
  return em.findOneOrFail(OfferRow, { linkKey: key });
}

/** Whether an offer was posted with this link (its key), reading its id only. */
export async function linkTaken(em: EntityManager, key: string): Promise<boolean> {
  return (await em.findOne(OfferRow, { linkKey: key }, { fields: ["id"] })) !== null;
}

/** Both offers locked in id order (two merges crossing never deadlock); 404 when either is missing. */
export async function lockOfferPair(em: EntityManager, a: string, b: string): Promise<[OfferRow, OfferRow]> {
  const rows = await em.find(
    OfferRow,
    { id: { $in: [a, b] } },
    { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { id: "asc" } },
  );
  const first = rows.find((row) => row.id === a);
  const second = rows.find((row) => row.id === b);
  if (!first || !second) throw offerNotFound();
  return [first, second];
}

/** Writes a submitted offer. */
export async function insertOffer(em: EntityManager, offer: RequiredEntityData<OfferRow>): Promise<OfferRow> {
  const row = em.create(OfferRow, offer);
  await em.flush();
  return row;
}

/** Writes changes to an offer (edits, expiry, merge, moderation) in the caller's transaction. */
export async function changeOffer(em: EntityManager, row: OfferRow, changes: Partial<OfferRow>): Promise<void> {
  Object.assign(row, changes);
  await em.flush();
}

/** A person's review of an offer's AI-assisted text: recorded, and the offer indexed again. */
export async function recordReview(em: EntityManager, row: OfferRow, reviewer: string, note: string, at: Date) {
  em.create(ReviewRow, { id: newId("rev"), offerId: row.id, reviewer, note, createdAt: at });
  await changeOffer(em, row, { reviewedBy: reviewer, reviewedAt: at, noindex: false, updatedAt: at });
}

/** Expires up to `limit` offers past their stated end, as of that end; answers their ids. */
export async function expireDueOffers(em: EntityManager, at: Date, limit: number): Promise<string[]> {
  const due = await em.find(OfferRow, { expiredAt: null, expiresAt: { $ne: null, $lte: at } }, { limit });
  for (const row of due) Object.assign(row, { expiredAt: row.expiresAt, expiredBy: EXPIRY, updatedAt: at });
  await em.flush();
  return due.map((row) => row.id);
}

/** 409 offer.not_active unless the offer is active as of `now` (votes, observations): past its stated end it is not. */
export function requireActive(row: OfferRow, now: Date): void {
  const status = offerStatus(row, now);
  if (status !== "active") {
    throw problem(409, "offer.not_active", `The offer is ${status}.`, {
      offer_status: status,
      ...(row.mergedInto ? { merged_into: row.mergedInto } : {}),
    });
  }
}

/** The offers an offer reads across: a canonical offer and those merged into it; a merged offer alone. */
export async function groupOf(em: EntityManager, row: OfferRow): Promise<string[]> {
  if (row.mergedInto) return [row.id];
  const members = await em.find(OfferRow, { mergedInto: row.id }, { fields: ["id"], orderBy: { id: "asc" } });
  return [row.id, ...members.map((member) => member.id)];
}

const marks = (values: unknown[]) => values.map(() => "?").join(", ");

/** Votes and observations of a group, a voter counted once, with hot@1 from the offer's own submit time. */
export async function tallyOf(em: EntityManager, row: OfferRow, group: string[]): Promise<Tally> {
  // No votes on one's own offer: a submitter's vote on a duplicate merged into their offer does not count for it.
  const votes = await sql<{ voter: string; value: number; weight: number; created_at: Date }>(
    em,
    `select voter, value, weight, created_at from {votes} where offer_id in (${marks(group)}) and removed_at is null and voter <> ?`,
    [...group, row.submittedBy],
  );
  const [{ count }] = await sql<{ count: string }>(
    em,
    `select count(*) as count from {observations} where offer_id in (${marks(group)})`,
    group,
  );
  const votesTally = tallyVotes(
    votes.map((v) => ({ voter: v.voter, value: v.value, weight: Number(v.weight), at: new Date(v.created_at) })),
  );
  return create(TallySchema, {
    ...votesTally,
    hotness: hotness(votesTally.score, row.createdAt),
    observations: Number(count),
  });
}

const STATUS = {
  active: OfferStatus.ACTIVE,
  expired: OfferStatus.EXPIRED,
  disabled: OfferStatus.DISABLED,
  merged: OfferStatus.MERGED,
} as const;
export const CONDITIONS = { new: Condition.NEW, used: Condition.USED, refurbished: Condition.REFURBISHED } as const;
export const AVAILABILITIES = {
  in_stock: Availability.IN_STOCK,
  out_of_stock: Availability.OUT_OF_STOCK,
  preorder: Availability.PREORDER,
  limited: Availability.LIMITED,
} as const;

const money = (minor: bigint | null | undefined, currency: string | null | undefined) =>
  minor == null || !currency ? undefined : { minorUnits: BigInt(minor), currency };

export function observationToProto(row: ObservationRow): Observation {
  return create(ObservationSchema, {
    id: row.id,
    offerId: row.offerId,
    observedBy: row.observedBy,
    price: money(row.priceMinor, row.priceCurrency),
    shipping: money(row.shippingMinor, row.shippingCurrency),
    condition: row.condition ? CONDITIONS[row.condition as keyof typeof CONDITIONS] : Condition.UNSPECIFIED,
    availability: row.availability
      ? AVAILABILITIES[row.availability as keyof typeof AVAILABILITIES]
      : Availability.UNSPECIFIED,
    observedAt: timestampFromDate(row.observedAt),
    recordedAt: timestampFromDate(row.recordedAt),
  });
}

/** An offer as read at `now`: a canonical offer's tally and latest observation read across its merge group. */
export async function offerToProto(em: EntityManager, row: OfferRow, now: Date): Promise<Offer> {
  const expiredAt = expiredAtOf(row, now);
  const group = await groupOf(em, row);
  const latest = await em.findOne(
    ObservationRow,
    { offerId: { $in: group } },
    { orderBy: { observedAt: "desc", id: "desc" } },
  );
  return create(OfferSchema, {
    id: row.id,
    link: row.link,
    title: row.title,
    description: row.description,
    category: row.category,
    expiresAt: row.expiresAt ? timestampFromDate(row.expiresAt) : undefined,
    productId: row.productId ?? "",
    status: STATUS[offerStatus(row, now)],
    submittedBy: row.submittedBy,
    aiAssisted: row.aiAssisted,
    noindex: row.noindex,
    reviewedBy: row.reviewedBy ?? "",
    mergedInto: row.mergedInto ?? "",
    merged: group.slice(1),
    tally: await tallyOf(em, row, group),
    latestObservation: latest ? observationToProto(latest) : undefined,
    createdAt: timestampFromDate(row.createdAt),
    expiredAt: expiredAt ? timestampFromDate(expiredAt) : undefined,
  });
}
