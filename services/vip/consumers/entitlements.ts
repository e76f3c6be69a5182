import { timestampDate } from "@bufbuild/protobuf/wkt";
import { EntitlementChangedSchema } from "../../../gen/pf/billing/v1/events_pb.js";
import { consumer } from "../../kit/events/consumer.js";
import type { VipContext } from "../context.js";
import { factOfSubscription, storeFact } from "../db/projection.js";

/**
 * The projection of billing entitlements: each billing.entitlement.changed
 * (started, renewed, canceled, ended) is applied once (the kit's inbox), and
 * never over a newer fact a direct check brought.
 */
export const entitlementsConsumer = consumer<VipContext, typeof EntitlementChangedSchema>({
  name: "entitlements",
  subject: "billing.entitlement.changed",
  event: EntitlementChangedSchema,
  from: "all",
  async handle(event, em) {
    const subscription = event.subscription;
    if (!subscription || !event.occurredAt) return;
    // Fresh as of billing's change: a delayed event is no fresher than when it happened.
    const at = timestampDate(event.occurredAt);
    await storeFact(em, subscription.subject, subscription.streamer, factOfSubscription(subscription, at, at));
  },
});
