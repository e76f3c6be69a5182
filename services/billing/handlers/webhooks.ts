import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import { ProviderWebhookResultSchema } from "../../../gen/pf/billing/v1/intents_pb.js";
import { maxLength } from "../../kit/handler/text.js";
import type { BillingContext } from "../context.js";
import { eventStatusToProto, storeEvent } from "../db/provider-events.js";
import { applyDelivered } from "../workers/provider-events.js";

type WebhookHandlers = Pick<ServiceImpl<typeof BillingService>, "receiveProviderWebhook">;

/**
 * Provider webhook intake (public, anonymous: the signature is the only
 * credential). Each event is stored once and applied right after its commit;
 * a duplicate delivery is acknowledged and never applied again.
 */
export function webhookHandlers(ctx: BillingContext): WebhookHandlers {
  return {
    async receiveProviderWebhook(request, call) {
      const provider = ctx.providers.get(request.provider);
      const event = provider.verifyWebhook(call.requestHeader, request.payload);
      maxLength("webhook-id", event.id, 200);
      maxLength("type", event.type, 100);
      maxLength("order_id", event.orderId, 200);
      const payload = Buffer.from(request.payload).toString("utf8");
      const stored = await ctx.transaction((em) => storeEvent(em, provider.name, event, payload, ctx.clock.now()));
      // Nothing is lost if this does not happen now: the provider-events worker applies what stays pending.
      const status =
        stored.status === "pending" ? ((await applyDelivered(ctx, stored.id))?.status ?? stored.status) : stored.status;
      return create(ProviderWebhookResultSchema, {
        eventId: stored.id,
        status: eventStatusToProto(status),
        duplicate: stored.duplicate,
      });
    },
  };
}
