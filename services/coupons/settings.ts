import type { RateRule } from "../kit/handler/rate-limit.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * The coupons rate limits (README.md). People reporting and submitting are
 * counted per person; lookups per token, and anonymous lookups per client
 * address with a tighter limit. Service tokens are not limited on lookups:
 * they answer their own callers, whom they limit.
 */
export const LIMITS = {
  /** Reports per person per hour. */
  reportsPerHour: 30,
  /** Submissions per person (or, for AI output, per submitting service) per hour. */
  submitsPerHour: 20,
  /** Lookups per user or app token per minute. */
  lookupsPerMinute: 600,
  /** Lookups per anonymous client address per minute. */
  anonymousLookupsPerMinute: 60,
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

export const lookupRule = (sub: string): RateRule => ({
  name: "coupons.lookup.token",
  key: sub,
  limit: LIMITS.lookupsPerMinute,
  windowMs: MINUTE,
});

export const anonymousLookupRule = (addressHash: string): RateRule => ({
  name: "coupons.lookup.anonymous",
  key: addressHash,
  limit: LIMITS.anonymousLookupsPerMinute,
  windowMs: MINUTE,
});
