import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CashoutSchema, CashoutStatus, type Cashout } from "../../../gen/pf/billing/v1/cashouts_pb.js";
import type { CashoutStatus as Status } from "../domain/cashouts.js";
import { money } from "../domain/money.js";
import type { CashoutRow } from "./entities.js";

const STATUS: Record<Status, CashoutStatus> = {
  requested: CashoutStatus.REQUESTED,
  approved: CashoutStatus.APPROVED,
  denied: CashoutStatus.DENIED,
};

/** The stored state of a proto status (undefined for UNSPECIFIED: no filter). */
export function cashoutStatusFromProto(status: CashoutStatus): Status | undefined {
  return (Object.keys(STATUS) as Status[]).find((s) => STATUS[s] === status);
}

export function cashoutToProto(row: CashoutRow): Cashout {
  return create(CashoutSchema, {
    id: row.id,
    subject: row.subject,
    amount: money(row.amount, row.currency),
    status: STATUS[row.status as Status],
    escrowUntil: timestampFromDate(row.escrowUntil),
    payoutReference: row.payoutReference,
    reason: row.reason,
    decidedBy: row.decidedBy,
    createdAt: timestampFromDate(row.createdAt),
    decidedAt: row.decidedAt ? timestampFromDate(row.decidedAt) : undefined,
  });
}
