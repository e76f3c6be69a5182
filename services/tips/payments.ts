import { create } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ConnectError } from "@connectrpc/connect";
import { CheckoutKind, IntentStatus, TipPaymentSchema, type Intent } from "../../gen/pf/billing/v1/intents_pb.js";
import type { Transfer } from "../../gen/pf/billing/v1/ledger_pb.js";
import { EntityRefSchema } from "../../gen/pf/v1/refs_pb.js";
import { money } from "../kit/handler/money.js";
import { problemOf } from "../kit/handler/problem.js";
import { callerRefused, notAnswered } from "../kit/runtime/call.js";
import type { TipsContext } from "./context.js";
import { checkoutById, declineCheckout, keepIntent, lockCheckout, settleCheckout } from "./db/checkouts.js";
import type { CheckoutRow } from "./db/entities.js";

const REASONS: Record<string, string> = { tip: "tip", paid_message: "paid message", media_request: "media request" };

/** What billing's records of a checkout point at: the interaction it pays for. */
export const referenceOf = (id: string) => create(EntityRefSchema, { service: "tips", kind: "interaction", id });

/**
 * The billing idempotency key of a checkout: derived from it alone, so a retry
 * (the supporter's, or the recovery worker's) never pays twice.
 */
export const billingKeyOf = (id: string) => `tips:${id}`;

/**
 * Takes a pending checkout's payment to billing, outside any transaction, and
 * records the outcome in a short one: credit payments settle from the
 * transfer's answer; intent payments keep the intent (billing.intent.settled
 * or .declined settles them later). Only a refusal billing itself raised (its
 * problem: too little credit, frozen economy, amount out of range) declines
 * the checkout for good; a call billing did not answer (the kit's
 * notAnswered: a reset, a timeout, a cancellation, tips' own token refused)
 * may have moved the money, so it leaves the checkout pending for a retry with
 * the same billing key. Answers the checkout as it is now.
 */
export async function pay(ctx: TipsContext, id: string): Promise<CheckoutRow> {
  const row = await checkoutById(ctx.orm.em.fork(), id);
  if (row.paymentState !== "pending" || (row.method === "intent" && row.intentId)) return row;
  const amount = money(row.amount, row.currency);
  let answer: { transfer: Transfer } | { intent: Intent };
  try {
    if (row.method === "credit") {
      const { transfer } = await ctx.billing.createTransfer({
        fromSubject: row.supporter,
        toSubject: row.creator,
        amount,
        idempotencyKey: billingKeyOf(id),
        reason: REASONS[row.kind],
        reference: referenceOf(id),
      });
      answer = { transfer: transfer! };
    } else {
      const { intent } = await ctx.billing.createIntent({
        subject: row.supporter,
        product: { case: "tip", value: create(TipPaymentSchema, { creator: row.creator, amount }) },
        checkout: CheckoutKind.WEB,
        returnUrl: row.returnUrl,
        idempotencyKey: billingKeyOf(id),
        reference: referenceOf(id),
      });
      answer = { intent: intent! };
    }
  } catch (error) {
    if (notAnswered(error)) {
      const log = { err: error, checkout: id };
      if (callerRefused(error)) ctx.logger.error(log, "billing refused tips' own token; the checkout stays pending");
      else ctx.logger.warn(log, "billing did not answer; the checkout stays pending");
      return row;
    }
    if (!(error instanceof ConnectError)) throw error;
    const { code } = problemOf(error);
    return record(ctx, id, (em, locked, at) => declineCheckout(em, locked, code, at));
  }
  if ("intent" in answer) return applyIntent(ctx, id, answer.intent);
  const transactionId = answer.transfer.id;
  return record(ctx, id, (em, locked, at) => settleCheckout(em, locked, { transactionId }, at));
}

/** Whether billing has not answered a checkout's payment yet: its outcome is unknown until a retry asks again. */
export function awaitingBilling(row: CheckoutRow): boolean {
  return row.paymentState === "pending" && (row.method === "credit" || !row.intentId);
}

/** Records what billing says of a checkout's intent: its id and checkout URL, and its final state once it has one. */
export function applyIntent(ctx: TipsContext, id: string, intent: Intent): Promise<CheckoutRow> {
  return record(ctx, id, async (em, row, at) => {
    if (row.paymentState === "pending" && !row.intentId) await keepIntent(em, row, intent, at);
    if (intent.status === IntentStatus.SETTLED) await settleCheckout(em, row, { intentId: intent.id }, at);
    else if (intent.status === IntentStatus.DECLINED)
      await declineCheckout(em, row, intent.declineReason || "declined", at);
  });
}

async function record(
  ctx: TipsContext,
  id: string,
  change: (em: EntityManager, row: CheckoutRow, at: Date) => Promise<void>,
): Promise<CheckoutRow> {
  return ctx.transaction(async (em) => {
    const row = (await lockCheckout(em, id))!;
    await change(em, row, ctx.clock.now());
    return row;
  });
}
