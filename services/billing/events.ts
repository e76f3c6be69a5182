import type { EntityManager } from "@mikro-orm/postgresql";
import type { Economy } from "../../gen/pf/billing/v1/admin_pb.js";
import type { Cashout } from "../../gen/pf/billing/v1/cashouts_pb.js";
import type { Intent } from "../../gen/pf/billing/v1/intents_pb.js";
import type { LedgerTransaction, Transfer } from "../../gen/pf/billing/v1/ledger_pb.js";
import type { Subscription } from "../../gen/pf/billing/v1/subscriptions_pb.js";
import {
  AdjustmentPostedSchema,
  CashoutChangedSchema,
  EconomyChangedSchema,
  EntitlementChangedSchema,
  IntentChangedSchema,
  TransferCreatedSchema,
} from "../../gen/pf/billing/v1/events_pb.js";
import { recordEvent, recordEvents } from "../kit/events/outbox.js";

/** The subjects billing publishes (through its outbox, in the transaction of the change). */
export const subjects = {
  intentSettled: "billing.intent.settled",
  intentDeclined: "billing.intent.declined",
  transferCreated: "billing.transfer.created",
  entitlementChanged: "billing.entitlement.changed",
  cashoutRequested: "billing.cashout.requested",
  cashoutApproved: "billing.cashout.approved",
  cashoutDenied: "billing.cashout.denied",
  economyFrozen: "billing.economy.frozen",
  economyThawed: "billing.economy.thawed",
  adjustmentPosted: "billing.adjustment.posted",
} as const;

export function intentChanged(em: EntityManager, intent: Intent, at: Date) {
  const subject = intent.settledAt ? subjects.intentSettled : subjects.intentDeclined;
  return recordEvent(em, subject, IntentChangedSchema, { intent }, at);
}

/** One event per transfer, with one statement (a transfer alone, or a batch of them). */
export function transfersCreated(em: EntityManager, transfers: Transfer[]) {
  return recordEvents(
    em,
    subjects.transferCreated,
    TransferCreatedSchema,
    transfers.map((transfer) => ({ transfer, occurredAt: transfer.createdAt })),
  );
}

export type EntitlementChange = "started" | "renewed" | "canceled" | "ended";

export function entitlementChanged(em: EntityManager, subscription: Subscription, change: EntitlementChange, at: Date) {
  return recordEvent(em, subjects.entitlementChanged, EntitlementChangedSchema, { subscription, change }, at);
}

export function cashoutChanged(
  em: EntityManager,
  subject: typeof subjects.cashoutRequested | typeof subjects.cashoutApproved | typeof subjects.cashoutDenied,
  cashout: Cashout,
  at: Date,
) {
  return recordEvent(em, subject, CashoutChangedSchema, { cashout }, at);
}

export function economyChanged(em: EntityManager, economy: Economy, at: Date) {
  return recordEvent(
    em,
    economy.frozen ? subjects.economyFrozen : subjects.economyThawed,
    EconomyChangedSchema,
    { economy },
    at,
  );
}

export function adjustmentPosted(em: EntityManager, transaction: LedgerTransaction, at: Date) {
  return recordEvent(em, subjects.adjustmentPosted, AdjustmentPostedSchema, { transaction }, at);
}
