import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  CouponOrigin,
  CouponSchema,
  CouponStatus,
  ReportAggregatesSchema,
  type Coupon,
} from "../../../gen/pf/coupons/v1/coupons_pb.js";
import { qualified } from "../../kit/db/orm.js";
import { couponStatus, type CouponStatus as Status, type DayCount, type Moderation } from "../domain/confidence.js";
import type { CouponRow } from "./entities.js";

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
  const found = new Map<string, Reports>();
  if (couponIds.length === 0) return found;
  const rows = await em
    .getConnection()
    .execute<{ coupon_id: string; day: string; outcome: "worked" | "failed"; count: string; last_at: Date }[]>(
      `select coupon_id, day, outcome, count(*) as count, max(created_at) as last_at
       from ${qualified(em, "coupon_reports")} where latest and coupon_id in (?) group by coupon_id, day, outcome`,
      [couponIds],
      "all",
      em.getTransactionContext(),
    );
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
export function statusOf(row: CouponRow, reports: Reports | undefined, now: Date) {
  return couponStatus(
    { moderation: row.moderation as Moderation, expiresAt: row.expiresAt ?? null },
    (reports ?? NONE).days,
    now,
  );
}

/** A code as every caller sees it: aggregates, never a submitter or a reporter. */
export function couponToProto(row: CouponRow, reports: Reports | undefined, now: Date): Coupon {
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
