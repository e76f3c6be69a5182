import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/** A merchant: its main host and status; its sites are its domain rules. */
export const MerchantRow = defineEntity({
  name: "MerchantRow",
  checks: [{ name: "merchants_status_check", expression: "status in ('pending', 'approved', 'disabled')" }],
  tableName: "merchants",
  properties: {
    id: p.text().primary(),
    name: p.text(),
    host: p.text(),
    status: p.text(),
    createdBy: p.text(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type MerchantRow = InferEntity<typeof MerchantRow>;

/** One site rule; a domain and path belong to one merchant at most. */
export const DomainRuleRow = defineEntity({
  name: "DomainRuleRow",
  indexes: [{ name: "domain_rules_by_merchant", properties: ["merchantId"] }],
  tableName: "domain_rules",
  properties: {
    domain: p.text().primary(),
    pathPrefix: p.text().primary(),
    merchantId: p.text(),
    includeSubdomains: p.boolean(),
    createdAt: p.datetime(),
  },
});
export type DomainRuleRow = InferEntity<typeof DomainRuleRow>;

/**
 * A coupon code. Its status is not stored: it follows from `moderation`, the
 * expiry, reports and time. Published once it may enter active results (a
 * person's code of an approved merchant, or a held one staff returned).
 */
export const CouponRow = defineEntity({
  name: "CouponRow",
  checks: [
    { name: "coupons_origin_check", expression: "origin in ('person', 'ai')" },
    { name: "coupons_moderation_check", expression: "moderation in ('', 'disabled', 'expired')" },
  ],
  uniques: [{ name: "coupons_code_per_merchant", properties: ["merchantId", "codeKey"] }],
  indexes: [{ name: "coupons_by_merchant", properties: ["merchantId", "id"] }],
  tableName: "coupons",
  properties: {
    id: p.text().primary(),
    merchantId: p.text(),
    code: p.text(),
    /** The code compared (NFKC, upper case: domain/codes.ts): one code per merchant. */
    codeKey: p.text(),
    description: p.text(),
    restrictions: p.text(),
    evidence: p.text(),
    expiresAt: p.datetime().nullable(),
    origin: p.text(),
    submittedBy: p.text(),
    heldForReview: p.boolean(),
    publishedAt: p.datetime().nullable(),
    moderation: p.text().default(""),
    moderatedBy: p.text().default(""),
    moderationReason: p.text().default(""),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type CouponRow = InferEntity<typeof CouponRow>;

/** A person's worked/failed report on one UTC day; `latest` marks the one of theirs that counts. */
export const ReportRow = defineEntity({
  name: "ReportRow",
  checks: [
    { name: "coupon_reports_outcome_check", expression: "outcome in ('worked', 'failed')" },
    { name: "coupon_reports_day_check", expression: "day ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'" },
  ],
  uniques: [
    { name: "coupon_reports_one_per_day", properties: ["couponId", "reporter", "day"] },
    { name: "coupon_reports_one_latest", properties: ["couponId", "reporter"], where: "latest" },
  ],
  tableName: "coupon_reports",
  properties: {
    id: p.text().primary(),
    couponId: p.text(),
    reporter: p.text(),
    outcome: p.text(),
    day: p.text(),
    latest: p.boolean(),
    createdAt: p.datetime(),
  },
});
export type ReportRow = InferEntity<typeof ReportRow>;

export const entities = [MerchantRow, DomainRuleRow, CouponRow, ReportRow];
