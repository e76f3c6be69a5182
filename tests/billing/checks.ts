import type { TestPlatform } from "../support/platform.js";
import { billingOf } from "./support.js";

/** The subjects of the events billing's outbox holds about one record (by its id in the payload), oldest first. */
export async function eventsAbout(t: TestPlatform, id: string): Promise<string[]> {
  const rows = await billingOf(t).orm.em.getConnection().execute<{ subject: string }[]>(
    `select subject from billing.outbox where payload like ? order by id`,
    [`%${id}%`],
  );
  return rows.map((row) => row.subject);
}

/** Sets the economy switch directly (the freeze route belongs to the ledger admin's tests). */
export async function setFrozen(t: TestPlatform, frozen: boolean): Promise<void> {
  await billingOf(t).orm.em.getConnection().execute(`update billing.economy set frozen = ? where id = 1`, [frozen]);
}
