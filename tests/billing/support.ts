import type { BillingContext } from "../../services/billing/context.js";
import { post } from "../../services/billing/db/ledger.js";
import { PLATFORM, type Kind } from "../../services/billing/domain/ledger.js";
import type { TestPlatform } from "../support/platform.js";

let seq = 0;
/** A fresh usr_ subject. */
export const person = (tag = "p") => `usr_${tag}${++seq}x${Date.now().toString(36)}`;

/** The context the host built for billing: the one its handlers and workers share (its test provider included). */
export function billingOf(t: TestPlatform): BillingContext {
  return t.platform.contexts.get("billing") as BillingContext;
}

/** Puts money on a subject's balance through the real ledger, as an adjustment from the platform. */
export async function fund(
  t: TestPlatform,
  subject: string,
  amount: bigint,
  options: { kind?: Kind; currency?: string } = {},
) {
  const ctx = billingOf(t);
  const currency = options.currency ?? "USD";
  await ctx.transaction((em) =>
    post(em, {
      kind: "adjustment",
      movements: [
        { owner: subject, kind: options.kind ?? "credit", currency, amount },
        { owner: PLATFORM, kind: "adjustments", currency, amount: -amount },
      ],
      reason: "test funding",
      createdBy: "test",
      at: ctx.clock.now(),
    }),
  );
}

/** Every billing capability except cashout-manage, which is granted on its own. */
export const ALL_BUT_MANAGE = [
  "billing.ledger.admin",
  "billing.balance.read",
  "billing.cashout.request",
  "billing.entitlement.check",
  "billing.intent.create",
  "billing.subscription.manage",
  "billing.transfer.create",
];
