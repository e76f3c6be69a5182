import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import { CheckoutKind, IntentResultSchema } from "../../../gen/pf/billing/v1/intents_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { newId } from "../../kit/handler/ids.js";
import { optionalUrl } from "../../kit/handler/urls.js";
import { problem } from "../../kit/handler/problem.js";
import { requireUser } from "../../kit/handler/subjects.js";
import type { BillingContext } from "../context.js";
import type { IntentRow } from "../db/entities.js";
import { declineIntent, findIntent, insertIntent, intentToProto, lockIntentById } from "../db/intents.js";
import { requireThawed } from "../db/ledger.js";
import { settleIntent } from "../db/settlement.js";
import { quote, type Quote } from "../domain/intents.js";
import { requireReference } from "../domain/references.js";

type IntentHandlers = Pick<ServiceImpl<typeof BillingService>, "createIntent" | "getIntent" | "captureIntent">;

/** Payment intents (billing.intent.create): priced by billing, paid at a provider, settled once. */
export function intentHandlers(ctx: BillingContext): IntentHandlers {
  const answer = (row: IntentRow) => create(IntentResultSchema, { intent: intentToProto(row) });

  return {
    async createIntent(request, call) {
      const principal = principalOf(call);
      if (request.price !== undefined)
        throw problem(400, "billing.price_refused", "Billing prices every purchase itself: send no price.", {
          field: "price",
        });
      const subject = requireUser("subject", request.subject);
      const priced = quote(ctx.settings.catalogue, subject, request.product);
      const checkout = request.checkout === CheckoutKind.APP ? "app" : "web";
      const returnUrl = optionalUrl("return_url", request.returnUrl, ["https", "http"]);
      const reference = requireReference("reference", request.reference);
      // provider: at most 40 characters, declared.
      const provider = ctx.providers.get(request.provider || ctx.providers.defaultProvider);
      const once = idempotencyOf(call, request, { scope: `intent:${principal.sub}` });
      await requireThawed(ctx.orm.em.fork());

      // The provider is called before the transaction, never inside it; with a key, a retry
      // reopens no order (the key is the provider's request id) and answers the first intent.
      const id = newId("pi");
      const order =
        checkout === "web"
          ? await provider.createOrder({
              intentId: id,
              currency: priced.currency,
              price: priced.price,
              description: describe(priced),
              returnUrl,
              requestId: once.key ? `${principal.sub}:${once.key}` : id,
            })
          : { orderId: `app_${id}`, checkoutUrl: "" };
      return ctx.transaction((em) =>
        once.run(em, async () => {
          await requireThawed(em);
          const at = ctx.clock.now();
          const row = await insertIntent(em, {
            id,
            subject,
            status: "requires_action",
            product: priced.product,
            pack: priced.pack,
            streamer: priced.streamer,
            planId: priced.planId,
            planVersion: priced.planVersion,
            tier: priced.tier,
            currency: priced.currency,
            price: priced.price,
            creditGranted: priced.credit,
            checkout,
            provider: provider.name,
            providerOrderId: order.orderId,
            checkoutUrl: order.checkoutUrl,
            appReference: checkout === "app" ? order.orderId : "",
            returnUrl,
            referenceService: reference?.service ?? "",
            referenceKind: reference?.kind ?? "",
            referenceId: reference?.id ?? "",
            transactionId: null,
            subscriptionId: null,
            createdAt: at,
            updatedAt: at,
            settledAt: null,
          });
          return answer(row);
        }),
      );
    },

    async getIntent(request) {
      return answer(await findIntent(ctx.orm.em.fork(), request.id));
    },

    async captureIntent(request, call) {
      const by = principalOf(call).sub;
      const em = ctx.orm.em.fork();
      const intent = await findIntent(em, request.id);
      // A final intent answers as it is: settled once, declined for good.
      if (intent.status === "settled" || intent.status === "declined") return answer(intent);
      if (intent.checkout === "app")
        throw notApproved("An app purchase is settled with its store receipt, not captured.");
      await requireThawed(em);

      // Asked outside any transaction; what it came to is written in one short transaction.
      const outcome = await ctx.providers.get(intent.provider).captureOrder(intent.providerOrderId);
      if (outcome.status === "not_approved")
        throw notApproved("The buyer has not approved this intent's order at the provider yet.");
      return ctx.transaction(async (tx) => {
        const row = await lockIntentById(tx, intent.id);
        if (outcome.status === "declined") await declineIntent(tx, row, outcome.reason, ctx.clock.now());
        else await settleIntent(tx, ctx, row, by);
        return answer(row);
      });
    },
  };
}

function describe(priced: Quote): string {
  if (priced.product === "credit") return `credit ${priced.pack || priced.credit}`;
  return priced.product === "tip" ? `tip to ${priced.streamer}` : `channel subscription ${priced.streamer}`;
}

function notApproved(detail: string) {
  return problem(409, "intent.not_approved", detail);
}
