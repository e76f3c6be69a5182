import { maxLength } from "../../kit/handler/text.js";
import { invalid } from "../../kit/handler/problem.js";

export type OfferStatus = "active" | "expired" | "disabled" | "merged";

/** Who expires an offer at its stated end (the expiry worker, or a read past that end). */
export const EXPIRY = "svc:deals";

/** What decides an offer's status; each state is its own column, so every transition is reversible. */
export interface OfferState {
  mergedInto?: string | null;
  disabledAt?: Date | null;
  expiredAt?: Date | null;
  /** The deal's stated end: past it the offer is expired, whether or not the expiry worker came by yet. */
  expiresAt?: Date | null;
}

/** When the offer expired as of `now`: its recorded expiry, else its stated end once passed. */
export function expiredAtOf(offer: OfferState, now: Date): Date | null {
  if (offer.expiredAt) return offer.expiredAt;
  return offer.expiresAt && offer.expiresAt <= now ? offer.expiresAt : null;
}

/** Merged beats disabled beats expired (as of `now`): undoing one shows the state beneath it again. */
export function offerStatus(offer: OfferState, now: Date): OfferStatus {
  if (offer.mergedInto) return "merged";
  if (offer.disabledAt) return "disabled";
  if (expiredAtOf(offer, now)) return "expired";
  return "active";
}

/** A title trimmed, at most 200 characters (not blank, and a description's length, are declared). */
export const requireTitle = (field: string, title: string) => maxLength(field, title.trim(), 200);
export const requireCategory = (field: string, text: string) => maxLength(field, text.trim(), 100);

/** A stated expiry is a stated end of the deal: in the future when stated. */
export function requireStatedExpiry(field: string, at: Date, now: Date): Date {
  if (at <= now) throw invalid(field, `${field} is the deal's stated end: it must be in the future`);
  return at;
}
