import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { AdminResultSchema, type BillingAdminService } from "../../../../gen/pf/billing/v1/admin_pb.js";
import { principalOf } from "../../../kit/auth/principal.js";
import { idempotencyOf } from "../../../kit/writes/idempotency.js";
import { problem } from "../../../kit/handler/problem.js";
import type { BillingContext } from "../../context.js";
import { findIntent, intentToProto, lockIntentById } from "../../db/intents.js";
import { requireThawed } from "../../db/ledger.js";
import { settleIntent } from "../../db/settlement.js";
import { receiptMismatches } from "../../domain/intents.js";

type SettleHandlers = Pick<ServiceImpl<typeof BillingAdminService>, "settlePurchase">;

/** Settles an app purchase from its verified store receipt (billing.ledger.admin); an intent settles once. */
export function settleHandlers(ctx: BillingContext): SettleHandlers {
  return {
    async settlePurchase(request, call) {
      const by = principalOf(call).sub;
      // Declared: intent_id and receipt required, the receipt at most 10000 characters.
      const once = idempotencyOf(call, request, { scope: `settle:${by}` });
      const intent = await findIntent(ctx.orm.em.fork(), request.intentId);
      const receipt = ctx.providers.get(intent.provider).verifyReceipt(request.receipt);
      const mismatches = receiptMismatches(intent, receipt);
      if (mismatches.length > 0) {
        throw problem(
          422,
          "receipt.mismatch",
          `The receipt does not pay this intent: its ${mismatches.join(", ")} differ.`,
          { fields: mismatches },
        );
      }
      return ctx.transaction((em) =>
        once.run(em, async () => {
          await requireThawed(em);
          const row = await lockIntentById(em, intent.id);
          const change = await settleIntent(em, ctx, row, by);
          if (change.kind === "stale")
            throw problem(409, "intent.declined", `The intent cannot be settled: ${change.detail}`);
          return create(AdminResultSchema, { result: { case: "intent", value: intentToProto(row) } });
        }),
      );
    },
  };
}
