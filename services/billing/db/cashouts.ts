import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type FilterQuery, type RequiredEntityData } from "@mikro-orm/postgresql";
import { CashoutSchema, CashoutStatus, type Cashout } from "../../../gen/pf/billing/v1/cashouts_pb.js";
import type { CashoutStatus as Status } from "../domain/cashouts.js";
import { money } from "../domain/money.js";
import { CashoutRow } from "./entities.js";

/** The cashout with this id, locked for a change when asked; null when there is none. */
export function cashoutById(em: EntityManager, id: string, lock = false): Promise<CashoutRow | null> {
  return em.findOne(CashoutRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
}

/** Up to `rows` cashouts (of a subject, in a status, when given), newest first, before the cursor's id. */
export function cashoutsPage(
  em: EntityManager,
  filter: { subject?: string; status?: Status },
  before: string | undefined,
  rows: number,
): Promise<CashoutRow[]> {
  const where: FilterQuery<CashoutRow> = {
    ...(filter.subject ? { subject: filter.subject } : {}),
    ...(filter.status ? { status: filter.status } : {}),
    ...(before !== undefined ? { id: { $lt: before } } : {}),
  };
  return em.find(CashoutRow, where, { orderBy: { id: "desc" }, limit: rows });
}

/** Writes a requested cashout (its escrow already posted). */
export async function insertCashout(em: EntityManager, cashout: RequiredEntityData<CashoutRow>): Promise<CashoutRow> {
  const row = em.create(CashoutRow, cashout);
  await em.flush();
  return row;
}

/** Writes the decision on a locked cashout: approved with its payout reference, or denied with a reason. */
export async function recordDecision(em: EntityManager, row: CashoutRow, decision: Partial<CashoutRow>): Promise<void> {
  Object.assign(row, decision);
  await em.flush();
}

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
