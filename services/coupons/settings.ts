import type { RateRule } from "../kit/writes/rate-limit.js";

const HOUR = 3_600_000;

/**
 * The coupons write limits (README.md): people reporting and submitting are
 * counted per person. Lookups are limited by the rate limit `lookup` the
 * lookup routes declare (coupons.proto).
 */
export const LIMITS = {
  /** Reports per person per hour. */
  reportsPerHour: 30,
  /** Submissions per person (or, for AI output, per submitting service) per hour. */
  submitsPerHour: 20,
} as const;

export const reportRule = (person: string): RateRule => ({
  name: "coupons.report.person",
  key: person,
  limit: LIMITS.reportsPerHour,
  windowMs: HOUR,
});

export const submitRule = (submitter: string): RateRule => ({
  name: "coupons.submit.submitter",
  key: submitter,
  limit: LIMITS.submitsPerHour,
  windowMs: HOUR,
});
