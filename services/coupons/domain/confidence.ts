/**
 * A code's status and confidence follow from moderation, its expiry, people's
 * reports and time. Only each person's latest report counts, and a report
 * weighs less as it ages: its weight halves every HALF_LIFE_DAYS days.
 *
 *   W, F       the summed weights of counted "worked" and "failed" reports
 *   confidence (W + 1) / (W + F + 2)       0.5 with no reports
 *   status     unknown while W + F < MIN_WEIGHT, else reported_working at
 *              confidence >= WORKING_AT, reported_failed at <= FAILED_AT,
 *              unknown between
 */
export const HALF_LIFE_DAYS = 14;
export const MIN_WEIGHT = 0.5;
export const WORKING_AT = 0.6;
export const FAILED_AT = 0.4;

export type CouponStatus = "unknown" | "reported_working" | "reported_failed" | "expired" | "disabled";
export type Moderation = "" | "disabled" | "expired";
export type Outcome = "worked" | "failed";

/** Counted reports of one outcome made on one UTC day (YYYY-MM-DD). */
export interface DayCount {
  day: string;
  outcome: Outcome;
  count: number;
}

const DAY_MS = 86_400_000;

/** The UTC day of a time, YYYY-MM-DD: reports are one per person, code and this day. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** Confidence from 0 to 1, rounded to three places so answers stay stable. */
export function confidenceOf(reports: DayCount[], now: Date): { confidence: number; weight: number } {
  const today = Date.parse(utcDay(now));
  let worked = 0;
  let failed = 0;
  for (const { day, outcome, count } of reports) {
    const age = Math.max(0, (today - Date.parse(day)) / DAY_MS);
    const weight = count * 0.5 ** (age / HALF_LIFE_DAYS);
    if (outcome === "worked") worked += weight;
    else failed += weight;
  }
  return { confidence: Math.round(((worked + 1) / (worked + failed + 2)) * 1000) / 1000, weight: worked + failed };
}

/** Status and confidence now: moderation first, then the expiry, then the reports. */
export function couponStatus(code: { moderation: Moderation; expiresAt: Date | null }, reports: DayCount[], now: Date) {
  const { confidence, weight } = confidenceOf(reports, now);
  let status: CouponStatus;
  if (code.moderation !== "") status = code.moderation;
  else if (code.expiresAt !== null && code.expiresAt.getTime() <= now.getTime()) status = "expired";
  else if (weight < MIN_WEIGHT) status = "unknown";
  else status = confidence >= WORKING_AT ? "reported_working" : confidence <= FAILED_AT ? "reported_failed" : "unknown";
  return { status, confidence };
}
