import { answerOf, type Fact } from "./entitlements.js";

export interface Preferences {
  announce: boolean;
  notifications: boolean;
}

/** A checkout made through this service. */
export interface Checkout {
  id: string;
  creator: string;
  planId: string;
  planVersion: number;
  preferences: Preferences;
}

/** One membership of a subject: a checkout here, or the channel subscription billing holds (`fact`) that no checkout names. */
export type Chosen<C extends Checkout> =
  | { origin: "checkout"; creator: string; checkout: C; fact?: Fact }
  | { origin: "billing"; creator: string; fact: Fact; preferences: Preferences };

/** Nothing stated, nothing done in the member's name: not announced, no member notifications (as a checkout without preferences). */
export const NO_PREFERENCES: Preferences = { announce: false, notifications: false };

/**
 * A subject's memberships, one per channel (billing holds at most one live
 * subscription per subscriber and channel, so none is shown twice): the
 * checkout naming the plan version billing's entitlement names; else, while
 * that entitlement entitles, billing's own (subscribed at billing directly,
 * or its plan changed there), with the preferences of the member's latest
 * checkout for the channel; else the latest checkout. Checkouts come newest
 * first (by id), billing's after them by subscription, newest first.
 */
export function membershipsOf<C extends Checkout>(
  checkouts: C[],
  facts: Map<string, Fact>,
  now: Date,
  graceMs: number,
): Chosen<C>[] {
  const newest = [...checkouts].sort((a, b) => (a.id < b.id ? 1 : -1));
  const creators = new Set([...newest.map((c) => c.creator), ...facts.keys()]);
  const chosen: Chosen<C>[] = [];
  for (const creator of creators) {
    const fact = facts.get(creator);
    const own = newest.filter((c) => c.creator === creator);
    const named = fact ? own.find((c) => c.planId === fact.planId && c.planVersion === fact.planVersion) : undefined;
    if (named) chosen.push({ origin: "checkout", creator, checkout: named, fact });
    else if (fact?.subscriptionId && answerOf(fact, now, graceMs).member)
      chosen.push({ origin: "billing", creator, fact, preferences: own[0]?.preferences ?? NO_PREFERENCES });
    else if (own[0]) chosen.push({ origin: "checkout", creator, checkout: own[0], fact });
  }
  const key = (c: Chosen<C>) => (c.origin === "checkout" ? `1${c.checkout.id}` : `0${c.fact.subscriptionId}`);
  return chosen.sort((a, b) => (key(a) < key(b) ? 1 : -1));
}
