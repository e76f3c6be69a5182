import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import {
  CashoutListSchema,
  CashoutResultSchema,
  RecycleSchema,
  type CashoutResult,
} from "../../../gen/pf/billing/v1/cashouts_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { newId } from "../../kit/handler/ids.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import { requireUser } from "../../kit/handler/subjects.js";
import type { BillingContext } from "../context.js";
import { balancesOf } from "../db/balances.js";
import {
  cashoutById,
  cashoutsPage,
  cashoutStatusFromProto,
  cashoutToProto,
  insertCashout,
  recordDecision,
} from "../db/cashouts.js";
import type { CashoutRow } from "../db/entities.js";
import { post } from "../db/ledger.js";
import { decide, escrowUntil, requireMinimum, type Decision } from "../domain/cashouts.js";
import { PLATFORM } from "../domain/ledger.js";
import { money, requireAmount } from "../domain/money.js";
import { billingReference } from "../domain/references.js";
import { cashoutChanged, subjects } from "../events.js";

type CashoutHandlers = Pick<
  ServiceImpl<typeof BillingService>,
  "listCashouts" | "requestCashout" | "getCashout" | "approveCashout" | "denyCashout" | "recyclePayable"
>;

const answer = (row: CashoutRow): CashoutResult =>
  create(CashoutResultSchema, { result: { case: "cashout", value: cashoutToProto(row) } });

const OUTCOME = {
  approve: { status: "approved", kind: "cashout_approval", event: subjects.cashoutApproved },
  deny: { status: "denied", kind: "cashout_denial", event: subjects.cashoutDenied },
} as const;

const notFound = () => problem(404, "cashout.not_found", "There is no such cashout.");

/**
 * Cashouts of creator payable (only payable is withdrawable: bought credit
 * never is): requested into escrow (pending payouts), approved after the
 * escrow with the provider's payout reference, or denied back to payable;
 * and recycling payable into the same subject's spendable credit.
 */
export function cashoutHandlers(ctx: BillingContext): CashoutHandlers {
  /** Approves or denies one cashout under its row lock; a repeated decision answers the cashout as it is. */
  const decideCashout = (id: string, decision: Decision, by: string) =>
    ctx.transaction(async (em) => {
      const row = await cashoutById(em, id, true);
      if (!row) throw notFound();
      const at = ctx.clock.now();
      if (decide(row, decision, at) === "repeat") return answer(row);
      const outcome = OUTCOME[decision.action];
      // Approval pays the escrow out to the platform's payouts; denial reverses it to the creator's payable.
      const to =
        decision.action === "approve"
          ? ({ owner: PLATFORM, kind: "payouts" } as const)
          : ({ owner: row.subject, kind: "payable" } as const);
      const note =
        decision.action === "approve" ? { payoutReference: decision.payoutReference } : { reason: decision.reason };
      const posted = await post(em, {
        kind: outcome.kind,
        movements: [
          { owner: row.subject, kind: "pending_payout", currency: row.currency, amount: -row.amount },
          { ...to, currency: row.currency, amount: row.amount },
        ],
        reason: decision.action === "approve" ? `payout ${decision.payoutReference}` : decision.reason,
        reference: billingReference("cashout", row.id),
        createdBy: by,
        at,
      });
      await recordDecision(em, row, {
        ...note,
        status: outcome.status,
        decidedBy: by,
        decidedAt: at,
        decisionTransactionId: posted.transactionId,
      });
      await cashoutChanged(em, outcome.event, cashoutToProto(row), at);
      return answer(row);
    });

  return {
    async requestCashout(request, call) {
      const principal = principalOf(call);
      const subject = requireUser("subject", request.subject);
      const { currency, amount } = requireAmount("amount", request.amount);
      const once = idempotencyOf(call, request, { scope: `cashout:${principal.sub}`, required: true });
      requireMinimum(amount, currency, ctx.settings.cashoutMinimum);
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const at = ctx.clock.now();
          const id = newId("co");
          // Only payable moves into escrow: a subject with credit and no payable is short (409 insufficient_funds).
          const posted = await post(em, {
            kind: "cashout_request",
            movements: [
              { owner: subject, kind: "payable", currency, amount: -amount },
              { owner: subject, kind: "pending_payout", currency, amount },
            ],
            reference: billingReference("cashout", id),
            createdBy: principal.sub,
            at,
          });
          const row = await insertCashout(em, {
            id,
            subject,
            currency,
            amount,
            status: "requested",
            escrowUntil: escrowUntil(at, ctx.settings.escrowMs),
            requestTransactionId: posted.transactionId,
            decisionTransactionId: null,
            createdAt: at,
            decidedAt: null,
          });
          await cashoutChanged(em, subjects.cashoutRequested, cashoutToProto(row), at);
          return answer(row);
        }),
      );
    },

    async getCashout(request) {
      const row = await cashoutById(ctx.orm.em.fork(), request.id);
      if (!row) throw notFound();
      return answer(row);
    },

    async listCashouts(request) {
      const subject = request.subject === "" ? undefined : requireUser("subject", request.subject);
      // Declared: status one of the enum's, limit 1-200.
      const status = cashoutStatusFromProto(request.status);
      const limit = request.limit ?? DEFAULT_LIMIT;
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const rows = await cashoutsPage(ctx.orm.em.fork(), { subject, status }, before, limit + 1);
      const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
      return create(CashoutResultSchema, {
        result: {
          case: "cashouts",
          value: create(CashoutListSchema, { cashouts: items.map(cashoutToProto), nextCursor }),
        },
      });
    },

    async approveCashout(request, call) {
      const { payoutReference } = request; // required, at most 200 characters: declared
      return decideCashout(request.id, { action: "approve", payoutReference }, principalOf(call).sub);
    },

    async denyCashout(request, call) {
      const { reason } = request; // at most 500 characters: declared
      return decideCashout(request.id, { action: "deny", reason }, principalOf(call).sub);
    },

    async recyclePayable(request, call) {
      const principal = principalOf(call);
      const subject = requireUser("subject", request.subject);
      const { currency, amount } = requireAmount("amount", request.amount);
      const once = idempotencyOf(call, request, { scope: `recycle:${principal.sub}`, required: true });
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const posted = await post(em, {
            kind: "recycle",
            movements: [
              { owner: subject, kind: "payable", currency, amount: -amount },
              { owner: subject, kind: "credit", currency, amount },
            ],
            createdBy: principal.sub,
            at: ctx.clock.now(),
          });
          const [balance] = await balancesOf(em, subject, currency);
          const recycle = create(RecycleSchema, {
            transactionId: posted.transactionId,
            subject,
            amount: money(amount, currency),
            balance,
          });
          return create(CashoutResultSchema, { result: { case: "recycle", value: recycle } });
        }),
      );
    },
  };
}
