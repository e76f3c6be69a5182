import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import { BalanceReadResultSchema, TransactionListResultSchema } from "../../../gen/pf/billing/v1/ledger_pb.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../kit/handler/paging.js";
import { requireSubject } from "../../kit/handler/subjects.js";
import type { BillingContext } from "../context.js";
import { readBalances } from "../db/balances.js";
import { loadTransactions, transactionIdsOf } from "../db/history.js";
import { requireCurrency } from "../domain/money.js";

type BalanceHandlers = Pick<ServiceImpl<typeof BillingService>, "getBalance" | "listTransactions">;

/** Balances and transaction history of a subject (billing.balance.read). */
export function balanceHandlers(ctx: BillingContext): BalanceHandlers {
  return {
    async getBalance(request) {
      const subject = requireSubject("subject", request.subject);
      const currency = request.currency === "" ? undefined : requireCurrency("currency", request.currency);
      return create(BalanceReadResultSchema, {
        subject,
        balances: await readBalances(ctx, subject, currency),
      });
    },

    async listTransactions(request) {
      const subject = requireSubject("subject", request.subject);
      const currency = request.currency === "" ? undefined : requireCurrency("currency", request.currency);
      const limit = request.limit ?? DEFAULT_LIMIT; // 1-200, declared
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const em = ctx.orm.em.fork();
      const ids = await transactionIdsOf(em, { subject, currency, before, limit });
      const { items, nextCursor } = page(ids, limit, (id) => [id]);
      const transactions = await loadTransactions(em, items);
      return create(TransactionListResultSchema, { transactions, nextCursor });
    },
  };
}
