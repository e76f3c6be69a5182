import type { EntityManager } from "@mikro-orm/postgresql";
import { problemOf } from "../../kit/handler/problem.js";
import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { BillingContext } from "../context.js";
import type { SubscriptionRow } from "../db/entities.js";
import { post, requireThawed } from "../db/ledger.js";
import { changeSubscription, nextDueSubscription, subscriptionToProto } from "../db/subscriptions.js";
import { payeeOf } from "../domain/ledger.js";
import { billingReference } from "../domain/references.js";
import { dueOutcome, nextValidUntil } from "../domain/subscriptions.js";
import { entitlementChanged } from "../events.js";

export interface SweepCounts {
  renewed: number;
  ended: number;
}

/**
 * The renewal sweep: every subscription not ended whose period is over is
 * renewed from the subscriber's credit (active, paid via credit, credit
 * enough) or ended. One short transaction per subscription, each taking the
 * next due row that no other sweep holds (FOR UPDATE SKIP LOCKED), so two
 * sweeps at once share the work and never charge a period twice. A
 * subscription still due after its renewal (the sweep ran more than a period
 * late) renews again: each period charged is a period of entitlement.
 * While the economy is frozen it does nothing (and stops if a freeze comes mid-way).
 */
export async function sweepRenewals(ctx: BillingContext, by = "svc:billing"): Promise<SweepCounts> {
  const counts: SweepCounts = { renewed: 0, ended: 0 };
  // Rows that failed for an unexpected reason wait for the next pass instead of stopping this one.
  const failed: string[] = [];
  for (;;) {
    let picked: string | undefined;
    try {
      const outcome = await ctx.transaction(async (em) => {
        await requireThawed(em);
        const at = ctx.clock.now();
        const row = await nextDueSubscription(em, at, failed);
        if (!row) return undefined;
        picked = row.id;
        return settle(em, ctx, row, at, by);
      });
      if (outcome === undefined) return counts;
      counts[outcome]++;
    } catch (error) {
      if (problemOf(error).code === "economy.frozen") return counts;
      if (picked === undefined) throw error;
      ctx.logger.error({ err: error, subscription: picked }, "renewal failed; the next sweep tries again");
      failed.push(picked);
    }
  }
}

/** Renews or ends one due subscription, under its row lock. */
async function settle(
  em: EntityManager,
  ctx: BillingContext,
  row: SubscriptionRow,
  at: Date,
  by: string,
): Promise<keyof SweepCounts> {
  if (dueOutcome(row) === "renew" && (await charge(em, row, at, by))) {
    await changeSubscription(em, row, {
      validUntil: nextValidUntil(row.validUntil, ctx.settings.periodMs),
      periods: row.periods + 1,
      updatedAt: at,
    });
    await entitlementChanged(em, subscriptionToProto(row), "renewed", at);
    return "renewed";
  }
  // The entitlement stopped at the end of its last paid period, whenever the sweep comes by.
  await changeSubscription(em, row, { status: "ended", endedAt: row.validUntil, updatedAt: at });
  await entitlementChanged(em, subscriptionToProto(row), "ended", at);
  return "ended";
}

/** Pays one more period from the subscriber's credit at the subscription's price; false when the credit is short. */
async function charge(em: EntityManager, row: SubscriptionRow, at: Date, by: string): Promise<boolean> {
  try {
    await post(em, {
      kind: "subscription",
      movements: [
        { owner: row.subject, kind: "credit", currency: row.currency, amount: -row.price },
        { ...payeeOf(row.streamer), currency: row.currency, amount: row.price },
      ],
      reason: "renewal",
      reference: billingReference("subscription", row.id),
      createdBy: by,
      at,
    });
    return true;
  } catch (error) {
    // The ledger refuses a short balance before writing anything, so the transaction goes on to end the subscription.
    if (problemOf(error).code === "insufficient_funds") return false;
    throw error;
  }
}

/** The sweep as a background job: one instance at a time, every PF_BILLING_SWEEP_EVERY_MS. */
export const renewals: Worker<BillingContext> = leasedJob<BillingContext>(
  "billing.renewals",
  (ctx) => ({ everyMs: ctx.settings.sweepEveryMs }),
  async (ctx) => {
    await sweepRenewals(ctx);
  },
);
