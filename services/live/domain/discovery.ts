import { createHash } from "node:crypto";

/** The UTC day of a moment, YYYY-MM-DD. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The moment a UTC day (YYYY-MM-DD) begins. */
export function dayStartOf(day: string): Date {
  return new Date(`${day}T00:00:00Z`);
}

/** The featured rotation slot a moment falls in: floor(now / period). */
export function rotationSlot(at: Date, periodMs: number): number {
  return Math.floor(at.getTime() / periodMs);
}

/** The `count` channels a rotation slot shows: a window over the list that moves by `count` each slot, wrapping. */
export function featuredPick<T>(items: readonly T[], slot: number, count: number): T[] {
  if (items.length === 0) return [];
  const start = (slot * count) % items.length;
  return Array.from({ length: Math.min(count, items.length) }, (_, i) => items[(start + i) % items.length]);
}

/** The star of a day among eligible channels (sorted by the caller): a stable hash of the day picks one. */
export function starOf<T>(day: string, eligible: readonly T[]): T | undefined {
  if (eligible.length === 0) return undefined;
  const hash = createHash("sha256").update(`live.star\n${day}`).digest();
  return eligible[hash.readUInt32BE(0) % eligible.length];
}

/** The start of the stats bucket a moment falls in. */
export function bucketOf(at: Date, bucketMs: number): Date {
  return new Date(Math.floor(at.getTime() / bucketMs) * bucketMs);
}
