import type { EntityManager } from "@mikro-orm/postgresql";
import { advisoryLock } from "../../kit/db/advisory-lock.js";

/**
 * The lock of one site (a registrable domain): taken by everything that adds
 * domain rules under it (a pending merchant made by a submission, a manager's
 * new rules), so whoever comes second sees the first one's rules.
 */
export function lockSite(em: EntityManager, registrable: string): Promise<void> {
  return advisoryLock(em, `coupons.site:${registrable}`);
}

/** The lock of one code of one merchant: a second submission of it at once waits here, then finds the first. */
export function lockCode(em: EntityManager, merchantId: string, codeKey: string): Promise<void> {
  return advisoryLock(em, `coupons.code:${merchantId}:${codeKey}`);
}
