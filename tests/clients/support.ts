import type { Clock } from "../../services/kit/runtime/clock.js";

/** A platform clock running with real time, shifted ahead by `offsetMs` (only ever moved forward). */
export interface ShiftedClock extends Clock {
  offsetMs: number;
}

const MINUTE_MS = 60_000;

/**
 * How far ahead to shift a clock reading `now` so that it is `ms` before the end of a minute it has not reached
 * yet: rate limits count calls in windows of a minute, so there no call has been counted, and one refused is told
 * to come back when that minute ends.
 */
export function unspentMinuteEndingIn(ms: number, now: number): number {
  return MINUTE_MS - (now % MINUTE_MS) + MINUTE_MS - ms;
}
