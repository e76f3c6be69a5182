import { timestampDate } from "@bufbuild/protobuf/wkt";
import { IntentChangedSchema } from "../../../gen/pf/billing/v1/events_pb.js";
import { IntentStatus } from "../../../gen/pf/billing/v1/intents_pb.js";
import { consumer } from "../../kit/events/consumer.js";
import type { TipsContext } from "../context.js";
import { checkoutOfIntent, declineCheckout, lockCheckout, settleCheckout } from "../db/checkouts.js";

/**
 * billing.intent.settled and billing.intent.declined: the intent of a tips
 * checkout (matched by the reference tips sent, else by intent id) reached
 * its final state. Intents of other services are not ours and pass.
 */
function intentOutcome(name: string, subject: string) {
  return consumer({
    name,
    subject,
    event: IntentChangedSchema,
    async handle({ intent, occurredAt }, em, _meta, ctx: TipsContext) {
      if (!intent) return;
      const byReference = intent.reference?.service === "tips" ? intent.reference.id : undefined;
      const found = byReference ?? (await checkoutOfIntent(em, intent.id));
      if (!found) return;
      const row = await lockCheckout(em, found);
      if (!row) return;
      // Settled when billing settled it.
      const at = occurredAt ? timestampDate(occurredAt) : ctx.clock.now();
      if (intent.status === IntentStatus.SETTLED) await settleCheckout(em, row, { intentId: intent.id }, at);
      else if (intent.status === IntentStatus.DECLINED)
        await declineCheckout(em, row, intent.declineReason || "declined", at);
    },
  });
}

export const consumers = [
  intentOutcome("intent_settled", "billing.intent.settled"),
  intentOutcome("intent_declined", "billing.intent.declined"),
];
