import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { createHash } from "node:crypto";
import { CheckoutKind } from "../../../gen/pf/billing/v1/intents_pb.js";
import type { Subscription } from "../../../gen/pf/billing/v1/subscriptions_pb.js";
import {
  CheckoutResultSchema,
  type CheckoutResult,
  MembershipPreferencesSchema,
  MembershipSchema,
  PaidVia,
  Source,
} from "../../../gen/pf/vip/v1/memberships_pb.js";
import type { VipService } from "../../../gen/pf/vip/v1/vip_pb.js";
import type { Money } from "../../../gen/pf/v1/money_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { VipContext } from "../context.js";
import { insertMembership } from "../db/memberships.js";
import { planById, planVersion, versionsOf } from "../db/plans.js";
import { factOfSubscription, readFacts, resultOf, storeFact } from "../db/projection.js";
import { relayBilling } from "../domain/billing.js";
import { membershipCheckedOut } from "../events.js";
import { refusePrice } from "./plans.js";

type CheckoutHandlers = Pick<ServiceImpl<typeof VipService>, "createCheckout">;

/**
 * Membership checkout: the acting person joins the current version of a
 * published plan. Billing is called first, outside any transaction (with a
 * key derived from the caller's, so a retry reaches the same intent or
 * subscription), then the membership is written in one short transaction
 * under the caller's idempotency key.
 */
export function checkoutHandlers(ctx: VipContext): CheckoutHandlers {
  return {
    async createCheckout(request, call) {
      refusePrice(request.price);
      // A member (usr_), as the route declares (ACTOR_MEMBER): guests are refused before this.
      const member = actingPerson(call);
      // paid_via, plan_id, plan_version and return_url's length are held to the contract's rules.
      if (request.returnUrl !== "" && request.paidVia !== PaidVia.INTENT)
        throw invalid("return_url", "return_url applies to intent checkouts only");
      // A key is required, so a retry never pays twice.
      const idempotency = idempotencyOf(call, request, { scope: `checkout:${member}`, required: true });

      // A retry answers the first checkout without asking billing again.
      const em = ctx.orm.em.fork();
      const first = await idempotency.stored<CheckoutResult>(em);
      if (first) return first;

      const plan = await planById(em, request.planId);
      if (!plan || plan.status === "draft") throw problem(404, "plan.not_found", "There is no such published plan.");
      if (plan.status === "archived")
        throw problem(409, "plan.archived", "The plan is archived: it takes no new members.");
      if (plan.owner === member) throw problem(409, "checkout.own_plan", "A creator does not join their own plan.");
      const version = plan.currentVersion!;
      if (request.planVersion !== 0n && request.planVersion !== BigInt(version)) {
        throw problem(
          409,
          "plan.version_changed",
          "The plan has a newer version than the one shown: show it and try again.",
          { current_version: String(version) },
        );
      }
      const terms = await planVersion(em, plan.id, version);
      // Billing keeps keys to 255 characters: a digest of the member and their key.
      const billingKey = `vip-checkout:${createHash("sha256").update(`${member}\n${idempotency.key}`).digest("base64url")}`;
      const product = { streamer: plan.owner, planId: plan.id, planVersion: BigInt(version), tier: terms.tier };
      let paid: { intentId?: string; checkoutUrl?: string; price?: Money; subscription?: Subscription };
      // Billing's answer holds as of no later than the call: any change billing makes after it carries a later time.
      const asked = ctx.clock.now();
      try {
        if (request.paidVia === PaidVia.INTENT) {
          const { intent } = await ctx.billing.createIntent({
            subject: member,
            product: { case: "channelSubscription", value: product },
            checkout: CheckoutKind.WEB,
            returnUrl: request.returnUrl,
            idempotencyKey: billingKey,
          });
          paid = { intentId: intent!.id, checkoutUrl: intent!.checkoutUrl, price: intent!.price };
        } else {
          const { subscription } = await ctx.billing.createSubscription({
            subject: member,
            ...product,
            idempotencyKey: billingKey,
          });
          paid = { subscription, price: subscription!.price };
        }
      } catch (error) {
        relayBilling(error);
      }

      return ctx.transaction((tx) =>
        idempotency.run(tx, async () => {
          const at = ctx.clock.now();
          const preferences = {
            announce: request.preferences?.announce ?? false,
            notifications: request.preferences?.notifications ?? false,
          };
          const row = await insertMembership(tx, {
            id: newId("mbr"),
            member,
            creator: plan.owner,
            planId: plan.id,
            planVersion: version,
            preferences,
            paidVia: request.paidVia === PaidVia.INTENT ? "intent" : "credit",
            intentId: paid.intentId ?? null,
            subscriptionId: paid.subscription?.id ?? null,
            createdAt: at,
          });
          // Paid from credit, billing's answer is the freshest fact; an intent is paid later, so the projection answers.
          const fact = paid.subscription
            ? factOfSubscription(paid.subscription, asked, at)
            : (await readFacts(tx, { subject: member, streamer: plan.owner })).get(`${member}:${plan.owner}`);
          if (paid.subscription && fact) await storeFact(tx, member, plan.owner, fact);
          const joined = (await versionsOf(tx, [{ planId: plan.id, version }])).get(`${plan.id}:${version}`);
          const membership = create(MembershipSchema, {
            id: row.id,
            member,
            creator: plan.owner,
            planId: plan.id,
            planVersion: joined,
            preferences: create(MembershipPreferencesSchema, preferences),
            paidVia: request.paidVia,
            intentId: row.intentId ?? "",
            subscriptionId: row.subscriptionId ?? "",
            entitlement: resultOf(
              member,
              plan.owner,
              fact,
              at,
              ctx.settings.graceMs,
              paid.subscription ? Source.BILLING : Source.PROJECTION,
            ),
            createdAt: timestampFromDate(at),
          });
          await membershipCheckedOut(tx, membership, at);
          return create(CheckoutResultSchema, { membership, checkoutUrl: paid.checkoutUrl ?? "", price: paid.price });
        }),
      );
    },
  };
}
