import type { EntityManager } from "@mikro-orm/postgresql";
import type { BillingContext } from "../context.js";
import { billingReference } from "../domain/references.js";
import { purchaseMovements, transition, type IntentState, type Transition } from "../domain/intents.js";
import { intentChanged } from "../events.js";
import type { IntentRow } from "./entities.js";
import { intentToProto } from "./intents.js";
import { post } from "./ledger.js";
import { addPaidPeriod } from "./subscriptions.js";

/**
 * Settles a locked intent, once, inside the caller's transaction: the one
 * settlement of capture, provider webhooks and store receipts. Posts the
 * purchase (referenced as billing/intent/<id>, which reconciliation matches),
 * adds the paid period of a channel subscription, and publishes
 * billing.intent.settled. A settled intent answers unchanged.
 */
export async function settleIntent(
  em: EntityManager,
  ctx: BillingContext,
  row: IntentRow,
  by: string,
): Promise<Transition> {
  const change = transition(row.status as IntentState, "settle");
  if (change.kind !== "move") return change;
  const at = ctx.clock.now();
  const posted = await post(em, {
    kind: "purchase",
    movements: purchaseMovements(row, row.provider),
    reference: billingReference("intent", row.id),
    createdBy: by,
    at,
  });
  if (row.product === "channel_subscription") {
    const subscription = await addPaidPeriod(em, {
      subject: row.subject,
      streamer: row.streamer,
      planId: row.planId,
      planVersion: row.planVersion,
      tier: row.tier,
      currency: row.currency,
      price: row.price,
      paidVia: "intent",
      periodMs: ctx.settings.periodMs,
      at,
    });
    row.subscriptionId = subscription.id;
  }
  Object.assign(row, { status: change.to, transactionId: posted.transactionId, settledAt: at, updatedAt: at });
  await em.flush();
  await intentChanged(em, intentToProto(row), at);
  return change;
}
