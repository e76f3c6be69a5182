import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { BalanceReadResultSchema, TransactionListResultSchema, type BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { requireSubject } from "../../kit/handler/subjects.js";
import type { BillingContext } from "../context.js";
import { balancesOf } from "../db/balances.js";
import { loadTransactions } from "../db/history.js";
import { requireCurrency } from "../domain/money.js";

type BalanceHandlers = Pick<ServiceImpl<typeof BillingService>, "getBalance" | "listTransactions">;

/** Balances and transaction history of a subject (billing.balance.read). */
export function balanceHandlers(ctx: BillingContext): BalanceHandlers {
  return {
    async getBalance(request) {
      const subject = requireSubject("subject", request.subject);
      const currency = request.currency === "" ? undefined : requireCurrency("currency", request.currency);
      return create(BalanceReadResultSchema, { subject, balances: await balancesOf(ctx.orm.em.fork(), subject, currency) });
    },

    async listTransactions(request) {
      const subject = requireSubject("subject", request.subject);
      const currency = request.currency === "" ? undefined : requireCurrency("currency", request.currency);
      const limit = pageLimit(request.limit);
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const em = ctx.orm.em.fork();
      const params: unknown[] = [subject];
      if (currency) params.push(currency);
      if (before !== undefined) params.push(before);
      // Transaction ids sort by time: a page is whole transactions, however many of the subject's entries each holds.
      const rows = await em.getConnection().execute<{ transaction_id: string }[]>(
        `select distinct transaction_id from billing.entries
         where owner = ?${currency ? " and currency = ?" : ""}${before !== undefined ? " and transaction_id < ?" : ""}
         order by transaction_id desc limit ${limit + 1}`,
        params,
      );
      const { items, nextCursor } = page(rows, limit, (row) => [row.transaction_id]);
      const transactions = await loadTransactions(em, items.map((row) => row.transaction_id));
      return create(TransactionListResultSchema, { transactions, nextCursor });
    },
  };
}
