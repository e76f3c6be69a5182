import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import {
  CouponOrigin,
  CouponSchema,
  CouponStatus,
  ReportAggregatesSchema,
  type Coupon,
} from "../../../gen/pf/coupons/v1/coupons_pb.js";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { couponStatus, type CouponStatus as Status, type DayCount, type Moderation } from "../domain/confidence.js";
import { CouponRow } from "./entities.js";

/** A code locked for a change, inside the caller's transaction; null when there is none. */
export function lockCoupon(em: EntityManager, id: string): Promise<CouponRow | null> {
  return em.findOne(CouponRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/** A published code staff have not disabled, locked (its lock orders its reports); null otherwise. */
export function lockReportableCoupon(em: EntityManager, id: string): Promise<CouponRow | null> {
  return em.findOne(
    CouponRow,
    { id, publishedAt: { $ne: null }, moderation: { $ne: "disabled" } },
    { lockMode: LockMode.PESSIMISTIC_WRITE },
  );
}

/** A merchant's code with this key, if it has one. */
export function couponOfMerchant(em: EntityManager, merchantId: string, codeKey: string): Promise<CouponRow | null> {
  return em.findOne(CouponRow, { merchantId, codeKey });
}

/** Writes a submitted code under a new id (with the merchant and rules made for it, when new). */
export async function insertCoupon(
  em: EntityManager,
  coupon: Omit<RequiredEntityData<CouponRow>, "id">,
): Promise<CouponRow> {
  const row = em.create(CouponRow, { ...coupon, id: newId("cpn") });
  await em.flush();
  return row;
}

/** Writes changes to a code (its moderation, its review, its publication). */
export async function changeCoupon(em: EntityManager, row: CouponRow, changes: Partial<CouponRow>): Promise<void> {
  Object.assign(row, changes);
  await em.flush();
}

export const STATUS_TO_PROTO: Record<Status, CouponStatus> = {
  unknown: CouponStatus.UNKNOWN,
  reported_working: CouponStatus.REPORTED_WORKING,
  reported_failed: CouponStatus.REPORTED_FAILED,
  expired: CouponStatus.EXPIRED,
  disabled: CouponStatus.DISABLED,
};

/** The counted reports of some codes: each person's latest, by code, UTC day and outcome. */
export interface Reports {
  days: DayCount[];
  worked: number;
  failed: number;
  lastWorkedAt?: Date;
  lastFailedAt?: Date;
}

const NONE: Reports = { days: [], worked: 0, failed: 0 };

/** Reads the counted reports of these codes in one aggregate query (inside the caller's transaction, if any). */
export async function reportsOf(em: EntityManager, couponIds: string[]): Promise<Map<string, Reports>> {
  if (couponIds.length === 0) return new Map();
  const rows = await sql<ReportCount>(
    em,
    `select coupon_id, day, outcome, count(*) as count, max(created_at) as last_at
       from {coupon_reports} where latest and coupon_id in (?) group by coupon_id, day, outcome`,
    [couponIds],
  );
  return reportsOfCounts(rows);
}

type ReportCount = {
  coupon_id: string;
  day: string;
  outcome: "worked" | "failed";
  count: string;
  last_at: string | Date;
};

const countedReports = new HotRead<ReportCount, [string[]]>(
  "coupon_reports.counted",
  `select coupon_id, day, outcome, count(*) as count, max(created_at) as last_at
   from {coupon_reports} where latest and coupon_id = any($1) group by coupon_id, day, outcome`,
);

/** `reportsOf` as a hot read, outside any transaction. */
export async function readReports(ctx: ReadContext, couponIds: string[]): Promise<Map<string, Reports>> {
  return couponIds.length === 0 ? new Map() : reportsOfCounts(await countedReports.run(ctx, couponIds));
}

function reportsOfCounts(rows: readonly ReportCount[]): Map<string, Reports> {
  const found = new Map<string, Reports>();
  for (const row of rows) {
    const reports = found.get(row.coupon_id) ?? { days: [], worked: 0, failed: 0 };
    const count = Number(row.count);
    const lastAt = new Date(row.last_at);
    reports.days.push({ day: row.day, outcome: row.outcome, count });
    if (row.outcome === "worked") {
      reports.worked += count;
      if (!reports.lastWorkedAt || lastAt > reports.lastWorkedAt) reports.lastWorkedAt = lastAt;
    } else {
      reports.failed += count;
      if (!reports.lastFailedAt || lastAt > reports.lastFailedAt) reports.lastFailedAt = lastAt;
    }
    found.set(row.coupon_id, reports);
  }
  return found;
}

/** A code's status now, from its moderation, expiry, reports and the time. */
export function statusOf(row: Pick<CouponRow, "moderation" | "expiresAt">, reports: Reports | undefined, now: Date) {
  return couponStatus(
    { moderation: row.moderation as Moderation, expiresAt: row.expiresAt ?? null },
    (reports ?? NONE).days,
    now,
  );
}

/** A code as every caller sees it: aggregates, never a submitter or a reporter. */
export function couponToProto(row: StoredCoupon, reports: Reports | undefined, now: Date): Coupon {
  const counted = reports ?? NONE;
  const { status, confidence } = statusOf(row, counted, now);
  return create(CouponSchema, {
    id: row.id,
    merchantId: row.merchantId,
    code: row.code,
    description: row.description,
    status: STATUS_TO_PROTO[status],
    confidence,
    reports: create(ReportAggregatesSchema, {
      worked: counted.worked,
      failed: counted.failed,
      lastWorkedAt: counted.lastWorkedAt && timestampFromDate(counted.lastWorkedAt),
      lastFailedAt: counted.lastFailedAt && timestampFromDate(counted.lastFailedAt),
    }),
    restrictions: row.restrictions,
    expiresAt: row.expiresAt ? timestampFromDate(row.expiresAt) : undefined,
    evidence: row.evidence,
    origin: row.origin === "ai" ? CouponOrigin.AI : CouponOrigin.PERSON,
    createdAt: timestampFromDate(row.createdAt),
  });
}

/** One code with its reports read. */
export async function couponAnswer(em: EntityManager, row: CouponRow, now: Date): Promise<Coupon> {
  return couponToProto(row, (await reportsOf(em, [row.id])).get(row.id), now);
}

/** A code as stored: the entity, or a hot read's row. */
export type StoredCoupon = Pick<
  CouponRow,
  | "id"
  | "merchantId"
  | "code"
  | "description"
  | "restrictions"
  | "evidence"
  | "expiresAt"
  | "origin"
  | "publishedAt"
  | "moderation"
  | "createdAt"
>;

type CouponText = Omit<StoredCoupon, "expiresAt" | "publishedAt" | "createdAt"> & {
  expiresAt: string | null;
  publishedAt: string | null;
  createdAt: string;
};

const COUPON_COLUMNS = `c.id, c.merchant_id as "merchantId", c.code, c.description, c.restrictions, c.evidence,
  c.expires_at as "expiresAt", c.origin, c.published_at as "publishedAt", c.moderation, c.created_at as "createdAt"`;

const couponById = new HotRead<CouponText & { merchantStatus: string }, [string]>(
  "coupons.by_id",
  `select ${COUPON_COLUMNS}, m.status as "merchantStatus"
   from {coupons} c join {merchants} m on m.id = c.merchant_id where c.id = $1`,
);

const activeOfMerchant = new HotRead<CouponText, [string, Date, string | null, number]>(
  "coupons.active_by_merchant",
  `select ${COUPON_COLUMNS} from {coupons} c
   where c.merchant_id = $1 and c.published_at is not null and c.moderation = ''
     and (c.expires_at is null or c.expires_at > $2) and ($3::text is null or c.id < $3)
   order by c.id desc limit $4`,
);

const storedCoupon = <R extends CouponText>(row: R) => ({
  ...row,
  expiresAt: row.expiresAt === null ? null : new Date(row.expiresAt),
  publishedAt: row.publishedAt === null ? null : new Date(row.publishedAt),
  createdAt: new Date(row.createdAt),
});

/** A code with its merchant's status, read outside any transaction (a hot read); undefined when either is missing. */
export async function readCoupon(
  ctx: ReadContext,
  id: string,
): Promise<(StoredCoupon & { merchantStatus: string }) | undefined> {
  const [row] = await couponById.run(ctx, id);
  return row && storedCoupon(row);
}

/**
 * Up to `rows` of a merchant's active codes as of `now` (published, neither
 * disabled nor expired), newest first, before the cursor's id: a hot read.
 */
export async function readActiveCoupons(
  ctx: ReadContext,
  merchantId: string,
  now: Date,
  before: string | undefined,
  rows: number,
): Promise<StoredCoupon[]> {
  return (await activeOfMerchant.run(ctx, merchantId, now, before || null, rows)).map(storedCoupon);
}
