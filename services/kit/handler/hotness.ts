/**
 * hot@1, the platform's one ranking of voted things (deals' offers, the forum's threads), never taken from a
 * request:
 *
 *   hot = sign(score) · log10(max(|score|, 1)) + (created − 2026-01-01T00:00:00Z) / 45000 s
 *
 * The first ten points count as much as the next hundred, and a thing 12.5 hours newer ranks as one with ten
 * times the score: newer things rise, old ones sink without anything being rewritten as time passes. It depends
 * only on the score and the creation time, so it can be stored and paged by. Rounded to 7 decimals so equal inputs
 * give equal answers wherever it is computed.
 */
export const HOTNESS_EPOCH_MS = Date.UTC(2026, 0, 1);
export const HOTNESS_HALF_DAY_SECONDS = 45_000;

export function hotness(score: number, createdAt: Date): number {
  const order = Math.log10(Math.max(Math.abs(score), 1));
  const sign = score > 0 ? 1 : score < 0 ? -1 : 0;
  const age = (createdAt.getTime() - HOTNESS_EPOCH_MS) / 1000 / HOTNESS_HALF_DAY_SECONDS;
  return Math.round((sign * order + age) * 1e7) / 1e7;
}
