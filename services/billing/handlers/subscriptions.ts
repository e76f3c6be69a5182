import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import {
  EntitlementResultSchema,
  SubscriptionResultSchema,
  SubscriptionsAnswerSchema,
  SubscriptionView,
} from "../../../gen/pf/billing/v1/subscriptions_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { requireUser } from "../../kit/handler/subjects.js";
import type { BillingContext } from "../context.js";
import { post, requireThawed } from "../db/ledger.js";
import {
  addPaidPeriod,
  changeSubscription,
  entitlementsOf,
  entitlementToProto,
  lockSubscription,
  subscriptionsPage,
  subscriptionToProto,
} from "../db/subscriptions.js";
import { tierPrice } from "../domain/catalogue.js";
import { billingReference } from "../domain/references.js";
import { payeeOf } from "../domain/ledger.js";
import { cancellation, requireChannel } from "../domain/subscriptions.js";
import { entitlementChanged } from "../events.js";

type SubscriptionHandlers = Pick<
  ServiceImpl<typeof BillingService>,
  "getEntitlements" | "listSubscriptions" | "createSubscription" | "cancelSubscription"
>;

const optionalUser = (field: string, value: string) => (value === "" ? undefined : requireUser(field, value));
const optionalChannel = (field: string, value: string) => (value === "" ? undefined : requireChannel(field, value));

/**
 * Channel subscriptions and the entitlements they give, answered from
 * billing's own rows: reads (entitlement check, the subscriptions read),
 * subscribing from spendable credit, and cancelling.
 */
export function subscriptionHandlers(ctx: BillingContext): SubscriptionHandlers {
  return {
    async getEntitlements(request) {
      const subject = requireUser("subject", request.subject);
      const streamer = optionalChannel("streamer", request.streamer);
      const now = ctx.clock.now();
      const rows = await entitlementsOf(ctx.orm.em.fork(), subject, streamer, now);
      return create(EntitlementResultSchema, {
        subject,
        entitlements: rows.map(entitlementToProto),
        checkedAt: timestampFromDate(now),
      });
    },

    async listSubscriptions(request) {
      const subject = optionalUser("subject", request.subject);
      const streamer = optionalChannel("streamer", request.streamer);
      // view is one of the enum's (declared); entitlements by default.
      const view = request.view === SubscriptionView.UNSPECIFIED ? SubscriptionView.ENTITLEMENTS : request.view;
      const entitlements = view === SubscriptionView.ENTITLEMENTS;
      if (entitlements && request.includeEnded) {
        throw invalid(
          "include_ended",
          "include_ended applies to the subscriptions view: an ended subscription is no entitlement.",
        );
      }
      const limit = request.limit ?? DEFAULT_LIMIT; // 1-200, declared
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const now = ctx.clock.now();
      const rows = await subscriptionsPage(
        ctx.orm.em.fork(),
        { subject, streamer, currentAt: entitlements ? now : undefined, includeEnded: request.includeEnded },
        before,
        limit + 1,
      );
      const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
      return create(SubscriptionsAnswerSchema, {
        answer: entitlements
          ? {
              case: "entitlements",
              value: create(EntitlementResultSchema, {
                subject: subject ?? "",
                entitlements: items.map(entitlementToProto),
                checkedAt: timestampFromDate(now),
                nextCursor,
              }),
            }
          : {
              case: "subscriptions",
              value: create(SubscriptionResultSchema, { subscriptions: items.map(subscriptionToProto), nextCursor }),
            },
      });
    },

    async createSubscription(request, call) {
      const principal = principalOf(call);
      const subject = requireUser("subject", request.subject);
      const streamer = requireChannel("streamer", request.streamer);
      if (streamer === subject) throw invalid("streamer", "A subscriber subscribes to another person's channel.");
      // Declared: plan_id required, plan_version 1 or more.
      const { tier, currency, price } = tierPrice(ctx.settings.catalogue, request.tier);
      const once = idempotencyOf(call, request, { scope: `subscription:${principal.sub}`, required: true });
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const at = ctx.clock.now();
          const row = await addPaidPeriod(em, {
            subject,
            streamer,
            planId: request.planId,
            planVersion: request.planVersion,
            tier,
            currency,
            price,
            paidVia: "credit",
            periodMs: ctx.settings.periodMs,
            at,
          });
          // Short credit refuses the posting and rolls the period back with it.
          await post(em, {
            kind: "subscription",
            movements: [
              { owner: subject, kind: "credit", currency, amount: -price },
              { ...payeeOf(streamer), currency, amount: price },
            ],
            reference: billingReference("subscription", row.id),
            createdBy: principal.sub,
            at,
          });
          return create(SubscriptionResultSchema, { subscription: subscriptionToProto(row) });
        }),
      );
    },

    async cancelSubscription(request) {
      return ctx.transaction(async (em) => {
        await requireThawed(em);
        const row = await lockSubscription(em, request.id);
        if (!row) throw problem(404, "subscription.not_found", "There is no such subscription.");
        const outcome = cancellation(row, request.immediately);
        if (outcome !== "unchanged") {
          const at = ctx.clock.now();
          await changeSubscription(
            em,
            row,
            outcome === "end"
              ? // Ended now, without refund: the rest of the period is no longer an entitlement.
                {
                  status: "ended",
                  endedAt: at,
                  validUntil: new Date(Math.min(row.validUntil.getTime(), at.getTime())),
                  updatedAt: at,
                }
              : { status: "canceled", updatedAt: at },
          );
          await entitlementChanged(em, subscriptionToProto(row), outcome === "end" ? "ended" : "canceled", at);
        }
        return create(SubscriptionResultSchema, { subscription: subscriptionToProto(row) });
      });
    },
  };
}
