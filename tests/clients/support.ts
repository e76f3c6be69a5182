import type { Clock } from "../../services/kit/runtime/clock.js";

/** A platform clock running with real time, shifted ahead by `offsetMs` (only ever moved forward). */
export interface ShiftedClock extends Clock {
  offsetMs: number;
}

const MINUTE_MS = 60_000;

/**
 * How far ahead to shift a clock reading `now` so that its minute ends in `ms`: rate limits count calls in windows
 * of a minute, so a call refused there is told to come back when that minute ends.
 */
export function minuteEndingIn(ms: number, now: number): number {
  return (((MINUTE_MS - ms - (now % MINUTE_MS)) % MINUTE_MS) + MINUTE_MS) % MINUTE_MS;
}
