import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type FilterQuery, type RequiredEntityData } from "@mikro-orm/postgresql";
import {
  ChannelSubscriptionSchema,
  CreditPurchaseSchema,
  IntentSchema,
  IntentStatus,
  TipPaymentSchema,
  type Intent,
} from "../../../gen/pf/billing/v1/intents_pb.js";
import { EntityRefSchema } from "../../../gen/pf/v1/refs_pb.js";
import { problem } from "../../kit/handler/problem.js";
import { transition, type IntentState, type Transition } from "../domain/intents.js";
import { money } from "../domain/money.js";
import { intentChanged } from "../events.js";
import { IntentRow } from "./entities.js";

const STATUS: Record<IntentState, IntentStatus> = {
  requires_action: IntentStatus.REQUIRES_ACTION,
  approved: IntentStatus.APPROVED,
  settled: IntentStatus.SETTLED,
  declined: IntentStatus.DECLINED,
};

export function intentToProto(row: IntentRow): Intent {
  return create(IntentSchema, {
    id: row.id,
    subject: row.subject,
    status: STATUS[row.status as IntentState],
    product: productOf(row),
    price: money(row.price, row.currency),
    creditGranted: money(row.creditGranted, row.currency),
    provider: row.provider,
    providerOrderId: row.providerOrderId,
    checkoutUrl: row.checkoutUrl,
    appReference: row.appReference,
    reference: row.referenceId
      ? create(EntityRefSchema, { service: row.referenceService, kind: row.referenceKind, id: row.referenceId })
      : undefined,
    transactionId: row.transactionId ?? "",
    subscriptionId: row.subscriptionId ?? "",
    declineReason: row.declineReason,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
    settledAt: row.settledAt ? timestampFromDate(row.settledAt) : undefined,
  });
}

function productOf(row: IntentRow): Intent["product"] {
  if (row.product === "credit") {
    return {
      case: "credit",
      value: create(CreditPurchaseSchema, {
        pack: row.pack,
        credit: row.pack === "" ? money(row.creditGranted, row.currency) : undefined,
      }),
    };
  }
  if (row.product === "tip")
    return {
      case: "tip",
      value: create(TipPaymentSchema, { creator: row.streamer, amount: money(row.price, row.currency) }),
    };
  return {
    case: "channelSubscription",
    value: create(ChannelSubscriptionSchema, {
      streamer: row.streamer,
      planId: row.planId,
      planVersion: row.planVersion,
      tier: row.tier,
    }),
  };
}

function notFound() {
  return problem(404, "intent.not_found", "There is no such intent.");
}

/** Writes a new intent, priced and with the provider's order. */
export async function insertIntent(em: EntityManager, intent: RequiredEntityData<IntentRow>): Promise<IntentRow> {
  const row = em.create(IntentRow, intent);
  await em.flush();
  return row;
}

/** An intent by id (a read), or 404 intent.not_found. */
export async function findIntent(em: EntityManager, id: string): Promise<IntentRow> {
  const row = id === "" ? null : await em.findOne(IntentRow, { id });
  if (!row) throw notFound();
  return row;
}

/** Locks an intent for a change, inside the caller's transaction; null when there is none. */
export function lockIntent(em: EntityManager, where: FilterQuery<IntentRow>): Promise<IntentRow | null> {
  return em.findOne(IntentRow, where, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/** Locks an intent by id, or 404 intent.not_found. */
export async function lockIntentById(em: EntityManager, id: string): Promise<IntentRow> {
  const row = await lockIntent(em, { id });
  if (!row) throw notFound();
  return row;
}

/** The buyer approved at the provider: a locked intent moves to approved (if it may). */
export function approveIntent(row: IntentRow, at: Date): Transition {
  const change = transition(row.status as IntentState, "approve");
  if (change.kind === "move") Object.assign(row, { status: change.to, updatedAt: at });
  return change;
}

/** The provider declined: a locked intent moves to declined (if it may) and billing.intent.declined is published. */
export async function declineIntent(em: EntityManager, row: IntentRow, reason: string, at: Date): Promise<Transition> {
  const change = transition(row.status as IntentState, "decline");
  if (change.kind === "move") {
    Object.assign(row, { status: change.to, declineReason: reason.slice(0, 500), updatedAt: at });
    await em.flush();
    await intentChanged(em, intentToProto(row), at);
  }
  return change;
}
