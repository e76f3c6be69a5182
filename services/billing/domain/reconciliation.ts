import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  ImbalanceKind,
  ImbalanceSchema,
  ReconciliationSchema,
  type Reconciliation,
} from "../../../gen/pf/billing/v1/admin_pb.js";

/** The checks a reconciliation runs, by the imbalance each finds. */
export const CHECKS = {
  unbalanced_transaction: ImbalanceKind.UNBALANCED_TRANSACTION,
  balance_mismatch: ImbalanceKind.BALANCE_MISMATCH,
  negative_balance: ImbalanceKind.NEGATIVE_BALANCE,
  ledger_total: ImbalanceKind.LEDGER_TOTAL,
  intent_unbooked: ImbalanceKind.INTENT_UNBOOKED,
  purchase_without_intent: ImbalanceKind.PURCHASE_WITHOUT_INTENT,
  payment_unsettled: ImbalanceKind.PAYMENT_UNSETTLED,
  escrow_mismatch: ImbalanceKind.ESCROW_MISMATCH,
} as const;
export type Check = keyof typeof CHECKS;

/** One imbalance a check found, in minor units. */
export interface Finding {
  check: Check;
  currency: string;
  ref: string;
  expected: bigint;
  actual: bigint;
  detail: string;
}

/** What the run looked at. */
export interface Checked {
  transactions: bigint;
  accounts: bigint;
  /** Intents and provider events. */
  payments: bigint;
}

/** A run's report: balanced exactly when no check found anything; imbalances by kind, then by what they concern. */
export function reconciliationReport(
  run: { id: string; ranAt: Date; ranBy: string },
  findings: Finding[],
  checked: Checked,
): Reconciliation {
  const imbalances = findings
    .map(({ check, ...found }) => create(ImbalanceSchema, { kind: CHECKS[check], ...found }))
    .sort((a, b) => a.kind - b.kind || compare(a.ref, b.ref) || compare(a.currency, b.currency));
  return create(ReconciliationSchema, {
    id: run.id,
    ranAt: timestampFromDate(run.ranAt),
    ranBy: run.ranBy,
    balanced: imbalances.length === 0,
    imbalances,
    transactionsChecked: checked.transactions,
    accountsChecked: checked.accounts,
    paymentsChecked: checked.payments,
  });
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
