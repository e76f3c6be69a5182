import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import { TransferResultSchema, TransferSchema } from "../../../gen/pf/billing/v1/ledger_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { invalid } from "../../kit/handler/problem.js";
import { requireUser } from "../../kit/handler/subjects.js";
import type { BillingContext } from "../context.js";
import { post, type Posted, type Posting } from "../db/ledger.js";
import { BatchFailed } from "../db/transfer-batch.js";
import { accountKey } from "../domain/ledger.js";
import { money, requireAmount } from "../domain/money.js";
import { requireReference } from "../domain/references.js";
import { transfersCreated } from "../events.js";

type TransferHandlers = Pick<ServiceImpl<typeof BillingService>, "createTransfer">;

/** Transfers: a subject's spendable credit to a creator's payable (billing.transfer.create). */
export function transferHandlers(ctx: BillingContext): TransferHandlers {
  return {
    async createTransfer(request, call) {
      const principal = principalOf(call);
      const from = requireUser("from_subject", request.fromSubject);
      const to = requireUser("to_subject", request.toSubject);
      if (from === to) throw invalid("to_subject", "A transfer pays a creator other than the payer.");
      const { currency, amount } = requireAmount("amount", request.amount);
      const { reason } = request; // at most 200 characters: declared
      const reference = requireReference("reference", request.reference);
      const once = idempotencyOf(call, request, { scope: `transfer:${principal.sub}`, required: true });
      const payer = { owner: from, kind: "credit", currency } as const;
      const postingAt = (at: Date): Posting => ({
        kind: "transfer",
        movements: [
          { ...payer, amount: -amount },
          { owner: to, kind: "payable", currency, amount },
        ],
        reason,
        reference,
        createdBy: principal.sub,
        at,
      });
      const transferOf = (posted: Posted, at: Date) =>
        create(TransferSchema, {
          id: posted.transactionId,
          fromSubject: from,
          toSubject: to,
          amount: money(amount, currency),
          reason,
          reference,
          fromCreditAfter: posted.balances.get(accountKey(payer)),
          createdAt: timestampFromDate(at),
        });
      const alone = () =>
        ctx.transaction((em) =>
          once.run(em, async () => {
            const at = ctx.clock.now();
            const transfer = transferOf(await post(em, postingAt(at)), at);
            await transfersCreated(em, [transfer]);
            return create(TransferResultSchema, { transfer });
          }),
        );
      if (!ctx.transfers) return alone();
      const at = ctx.clock.now();
      try {
        return await ctx.transfers.post({
          key: once.identity(),
          posting: postingAt(at),
          transferOf: (posted) => transferOf(posted, at),
        });
      } catch (error) {
        if (error instanceof BatchFailed) return alone();
        throw error;
      }
    },
  };
}
