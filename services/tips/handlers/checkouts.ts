import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { PaidResultSchema, type PaidRequest, type PaidResult } from "../../../gen/pf/tips/v1/checkouts_pb.js";
import { PaymentMethod } from "../../../gen/pf/tips/v1/interactions_pb.js";
import type { TipsService } from "../../../gen/pf/tips/v1/tips_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { advisoryLock } from "../../kit/db/advisory-lock.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { requireAmount } from "../../kit/handler/money.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import { requireUser } from "../../kit/handler/subjects.js";
import { optionalUrl } from "../../kit/handler/urls.js";
import type { TipsContext } from "../context.js";
import { insertCheckout } from "../db/checkouts.js";
import type { CheckoutRow } from "../db/entities.js";
import { goalById, goalNotFound } from "../db/goals.js";
import { checkoutToProto, interactionById, interactionToProto } from "../db/interactions.js";
import { loadProfile } from "../db/profiles.js";
import { checkAgainstProfile, requireMedia, requireMessage, type Amount, type PaidKind } from "../domain/checkouts.js";
import { requireOpen } from "../domain/goals.js";
import { awaitingBilling, pay } from "../payments.js";

type CheckoutHandlers = Pick<
  ServiceImpl<typeof TipsService>,
  "createCheckout" | "createPaidMessage" | "createMediaRequest"
>;

/** Tips, paid messages and media requests: one checkout each, paid through billing. */
export function checkoutHandlers(ctx: TipsContext): CheckoutHandlers {
  return {
    createCheckout: (request, call) => startCheckout(ctx, "tip", request, call),
    createPaidMessage: (request, call) => startCheckout(ctx, "paid_message", request, call),
    createMediaRequest: (request, call) => startCheckout(ctx, "media_request", request, call),
  };
}

/**
 * One checkout per (supporter, Idempotency-Key): recorded pending in one
 * transaction, paid through billing outside it, settled in another. The key
 * keeps the checkout's id (the kit's idempotency keys, the request hashed with
 * its kind): a retry resumes the same checkout and answers it as it is now (a
 * declined one answers its refusal again); another request under the key is
 * refused. While billing has not answered (the kit's notAnswered) the checkout
 * stays pending and answers 202: a retry asks billing again with the same key.
 */
async function startCheckout(
  ctx: TipsContext,
  kind: PaidKind,
  request: PaidRequest,
  call: HandlerContext,
): Promise<PaidResult> {
  const supporter = actingPerson(call);
  const idempotency = idempotencyOf(call, request, { scope: `checkout:${supporter}`, hashWith: kind, required: true });
  const creator = requireUser("creator", request.creator);
  if (creator === supporter) throw invalid("creator", "A supporter cannot pay themselves.");
  const amount = requireAmount("amount", request.amount);
  const message = requireMessage(kind, request.message);
  const media = requireMedia(kind, request.mediaUrl, request.mediaSeconds);
  const method = methodOf(request);
  const returnUrl = requireReturnUrl(method, request.returnUrl);
  const goalId = request.goalId;

  const id = await ctx.transaction(async (em) => {
    // One request per supporter and key at a time: a concurrent duplicate waits here, then resumes the first.
    await advisoryLock(em, `tips.checkout:${supporter}:${idempotency.key}`);
    const first = await idempotency.run(em, async () => {
      checkAgainstProfile(await loadProfile(em, creator), kind, amount, media);
      if (goalId !== "") await requireGoalFor(em, goalId, creator, amount);
      const at = ctx.clock.now();
      const row = await insertCheckout(
        em,
        {
          supporter,
          creator,
          kind,
          currency: amount.currency,
          amount: amount.amount,
          message,
          goalId: goalId || null,
          mediaUrl: media?.url ?? "",
          mediaSeconds: media?.seconds ?? 0,
          method,
          returnUrl,
          paymentState: "pending",
          intentId: null,
          checkoutUrl: "",
          transactionId: null,
          declineReason: "",
          createdAt: at,
          updatedAt: at,
          settledAt: null,
        },
        at,
      );
      return create(PaidResultSchema, { checkout: checkoutToProto(row) });
    });
    return first.checkout!.id;
  });

  const row = await pay(ctx, id);
  if (row.paymentState === "declined") {
    throw problem(409, "tips.payment_declined", `Billing refused the payment: ${row.declineReason}.`, {
      reason: row.declineReason,
      checkout_id: row.id,
    });
  }
  const result = await answer(ctx, row);
  if (awaitingBilling(row)) {
    // The money may have moved: never a final-looking refusal, and the same key settles it.
    answerStatus(call, 202);
    result.detail = "Billing has not answered yet; retry with the same Idempotency-Key to learn the outcome.";
  }
  return result;
}

/** The checkout and its interaction, when it has one. */
async function answer(ctx: TipsContext, row: CheckoutRow): Promise<PaidResult> {
  const interaction = await interactionById(ctx.orm.em.fork(), row.id);
  return create(PaidResultSchema, {
    checkout: checkoutToProto(row),
    interaction: interaction ? interactionToProto(interaction) : undefined,
  });
}

/** How a checkout pays: the contract admits only unspecified (credit), credit and intent. */
function methodOf(request: PaidRequest): "credit" | "intent" {
  return request.paymentMethod === PaymentMethod.INTENT ? "intent" : "credit";
}

/** Where billing's provider sends the supporter back: intent payments only, an absolute http(s) URL. */
function requireReturnUrl(method: string, url: string): string {
  if (url === "") return "";
  if (method !== "intent") throw invalid("return_url", "return_url belongs to intent payments.");
  return optionalUrl("return_url", url, ["https", "http"]);
}

/** A goal a supporter may name: the creator's, public and open, in the amount's currency. */
async function requireGoalFor(em: EntityManager, id: string, creator: string, amount: Amount) {
  const goal = await goalById(em, id);
  if (!goal || goal.creator !== creator || !goal.public) throw goalNotFound();
  requireOpen(goal);
  if (goal.currency !== amount.currency) {
    throw problem(422, "tips.goal_currency_mismatch", `This goal counts ${goal.currency}.`, {
      field: "amount.currency",
      currency: goal.currency,
    });
  }
}
