import { outboxEvents } from "../support/outbox.js";
import type { TestPlatform } from "../support/platform.js";
import { billingOf } from "./support.js";

/** The subjects of the events billing's outbox holds about one record (by its id in the payload), oldest first. */
export const eventsAbout = async (t: TestPlatform, id: string) =>
  (await outboxEvents(t, "billing", id)).map((event) => event.subject);

/** Sets the economy switch directly (the freeze route belongs to the ledger admin's tests). */
export async function setFrozen(t: TestPlatform, frozen: boolean): Promise<void> {
  await billingOf(t).orm.em.getConnection().execute(`update billing.economy set frozen = ? where id = 1`, [frozen]);
}
