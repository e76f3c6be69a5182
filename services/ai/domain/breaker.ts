/**
 * A provider's circuit breaker as a pure state machine (the rows in db/breakers.ts apply it): `closed` lets calls
 * pass and counts failures in a row; `threshold` of them open it for `openMs`; once `reopensAt` passed, one caller
 * takes the trial (`half_open`, held until `trialUntil`) while everyone else is refused; the trial's success closes
 * it, its failure opens it again. A trial whose holder never reported (its instance was lost) lapses at
 * `trialUntil`, and the next caller takes a new one.
 */
export type BreakerState = "closed" | "open" | "half_open";

export interface Breaker {
  state: BreakerState;
  failures: number;
  threshold: number;
  openMs: number;
  openedAt: Date | null;
  reopensAt: Date | null;
  trialUntil: Date | null;
}

export type Admission = "pass" | "trial" | "refused";

/** Whether a call may go at `now`, and the breaker after it when taking the trial changes it. */
export function admit(breaker: Breaker, now: Date, trialMs: number): { admission: Admission; next?: Breaker } {
  if (breaker.state === "closed") return { admission: "pass" };
  const due =
    breaker.state === "open"
      ? breaker.reopensAt === null || breaker.reopensAt <= now
      : breaker.trialUntil === null || breaker.trialUntil <= now;
  if (!due) return { admission: "refused" };
  const trialUntil = new Date(now.getTime() + trialMs);
  return { admission: "trial", next: { ...breaker, state: "half_open", trialUntil } };
}

/**
 * The breaker after a call's outcome: a success closes it; a failure counts, and opens it at the threshold or when
 * it was half open (the trial failed). `opened` says it opened just now (the event to record). A failure while it is
 * open already (a call admitted before it opened) counts without opening it again.
 */
export function afterOutcome(
  breaker: Breaker,
  outcome: "success" | "failure",
  now: Date,
): { next: Breaker; opened: boolean } {
  if (outcome === "success") return { next: closed(breaker), opened: false };
  const failures = breaker.failures + 1;
  const opens = breaker.state === "half_open" || (breaker.state === "closed" && failures >= breaker.threshold);
  if (!opens) return { next: { ...breaker, failures }, opened: false };
  const reopensAt = new Date(now.getTime() + breaker.openMs);
  return { next: { ...breaker, state: "open", failures, openedAt: now, reopensAt, trialUntil: null }, opened: true };
}

/** Closed with no failures: after a success, or reset by an operator. */
export function closed(breaker: Breaker): Breaker {
  return { ...breaker, state: "closed", failures: 0, reopensAt: null, trialUntil: null };
}

/** Whether two breakers are the same state (so nothing needs writing). */
export function sameBreaker(a: Breaker, b: Breaker): boolean {
  const time = (at: Date | null) => at?.getTime() ?? null;
  return (
    a.state === b.state &&
    a.failures === b.failures &&
    time(a.openedAt) === time(b.openedAt) &&
    time(a.reopensAt) === time(b.reopensAt) &&
    time(a.trialUntil) === time(b.trialUntil)
  );
}
