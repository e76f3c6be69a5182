import type { EntityManager } from "@mikro-orm/postgresql";
import type {
  Coupon,
  CouponStatus,
  Merchant,
  MerchantStatus,
  ReportOutcome,
} from "../../gen/pf/coupons/v1/coupons_pb.js";
import {
  CodePublishedSchema,
  CodeReportedSchema,
  CodeStatusChangedSchema,
  CodeSubmittedSchema,
  MerchantChangedSchema,
} from "../../gen/pf/coupons/v1/events_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/** The subjects coupons publishes (through its outbox, in the transaction of the change); none names a reporter. */
export const subjects = {
  codeSubmitted: "coupons.code.submitted",
  codePublished: "coupons.code.published",
  codeStatusChanged: "coupons.code.status_changed",
  codeReported: "coupons.code.reported",
  merchantCreated: "coupons.merchant.created",
  merchantDomainsChanged: "coupons.merchant.domains_changed",
  merchantStatusChanged: "coupons.merchant.status_changed",
} as const;

export function codeSubmitted(
  em: EntityManager,
  coupon: Coupon,
  state: { heldForReview: boolean; published: boolean },
  at: Date,
) {
  return recordEvent(em, subjects.codeSubmitted, CodeSubmittedSchema, { coupon, ...state }, at);
}

export function codePublished(em: EntityManager, coupon: Coupon, at: Date) {
  return recordEvent(em, subjects.codePublished, CodePublishedSchema, { coupon }, at);
}

export function codeStatusChanged(
  em: EntityManager,
  coupon: Coupon,
  change: { previous: CouponStatus; reason: string; changedBy: string },
  at: Date,
) {
  return recordEvent(em, subjects.codeStatusChanged, CodeStatusChangedSchema, { coupon, ...change }, at);
}

export function codeReported(em: EntityManager, coupon: Coupon, outcome: ReportOutcome, at: Date) {
  return recordEvent(em, subjects.codeReported, CodeReportedSchema, { coupon, outcome }, at);
}

export function merchantChanged(
  em: EntityManager,
  subject:
    typeof subjects.merchantCreated | typeof subjects.merchantDomainsChanged | typeof subjects.merchantStatusChanged,
  merchant: Merchant,
  change: { previous?: MerchantStatus; reason?: string; changedBy: string },
  at: Date,
) {
  return recordEvent(em, subject, MerchantChangedSchema, { merchant, ...change }, at);
}
