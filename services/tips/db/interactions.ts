import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { CheckoutSchema, type Checkout } from "../../../gen/pf/tips/v1/checkouts_pb.js";
import {
  DeliveryState,
  InteractionKind,
  InteractionSchema,
  ModerationState,
  PaymentMethod,
  PaymentState,
  type Interaction,
} from "../../../gen/pf/tips/v1/interactions_pb.js";
import { money } from "../../kit/handler/money.js";
import { problem } from "../../kit/handler/problem.js";
import type {
  DeliveryState as Delivery,
  InteractionKind as Kind,
  Moderation,
  PaymentState as Payment,
} from "../domain/checkouts.js";
import { InteractionRow, type CheckoutRow } from "./entities.js";

export const KINDS: Record<Kind, InteractionKind> = {
  tip: InteractionKind.TIP,
  paid_message: InteractionKind.PAID_MESSAGE,
  media_request: InteractionKind.MEDIA_REQUEST,
  external: InteractionKind.EXTERNAL,
};
const PAYMENT: Record<Payment, PaymentState> = {
  pending: PaymentState.PENDING,
  settled: PaymentState.SETTLED,
  declined: PaymentState.DECLINED,
  external: PaymentState.EXTERNAL,
};
const DELIVERY: Record<Delivery, DeliveryState> = {
  pending: DeliveryState.PENDING,
  queued: DeliveryState.QUEUED,
  delivered: DeliveryState.DELIVERED,
  suppressed: DeliveryState.SUPPRESSED,
  canceled: DeliveryState.CANCELED,
};
const MODERATION: Record<Moderation, ModerationState> = {
  visible: ModerationState.VISIBLE,
  hidden: ModerationState.HIDDEN,
  held: ModerationState.HELD,
};
const METHODS: Record<string, PaymentMethod> = {
  credit: PaymentMethod.CREDIT,
  intent: PaymentMethod.INTENT,
  external: PaymentMethod.EXTERNAL,
};

const time = (at: Date | null | undefined) => (at ? timestampFromDate(at) : undefined);

export function interactionToProto(row: InteractionRow): Interaction {
  return create(InteractionSchema, {
    id: row.id,
    creator: row.creator,
    supporter: row.supporter,
    kind: KINDS[row.kind as Kind],
    amount: money(row.amount, row.currency),
    message: row.message,
    goalId: row.goalId ?? "",
    hidden: row.moderation !== "visible",
    paymentState: PAYMENT[row.paymentState as Payment],
    deliveryState: DELIVERY[row.deliveryState as Delivery],
    createdAt: time(row.createdAt),
    settledAt: time(row.settledAt),
    moderation: MODERATION[row.moderation as Moderation],
    paymentMethod: METHODS[row.method],
    mediaUrl: row.mediaUrl,
    mediaSeconds: row.mediaSeconds,
    intentId: row.intentId ?? "",
    transactionId: row.transactionId ?? "",
    provider: row.provider ?? "",
    providerRef: row.providerRef ?? "",
    supporterName: row.supporterName,
  });
}

export function checkoutToProto(row: CheckoutRow): Checkout {
  return create(CheckoutSchema, {
    id: row.id,
    kind: KINDS[row.kind as Kind],
    creator: row.creator,
    supporter: row.supporter,
    amount: money(row.amount, row.currency),
    paymentMethod: METHODS[row.method],
    paymentState: PAYMENT[row.paymentState as Payment],
    intentId: row.intentId ?? "",
    checkoutUrl: row.checkoutUrl,
    transactionId: row.transactionId ?? "",
    declineReason: row.declineReason,
    createdAt: time(row.createdAt),
    settledAt: time(row.settledAt),
  });
}

export function interactionNotFound() {
  return problem(404, "interaction.not_found", "There is no such interaction.");
}

/** The interaction with this id (a checkout's shares its id), if any. */
export function interactionById(em: EntityManager, id: string): Promise<InteractionRow | null> {
  return em.findOne(InteractionRow, { id });
}

/** An interaction locked for a change, inside the caller's transaction; null when there is none. */
export function lockInteraction(em: EntityManager, id: string): Promise<InteractionRow | null> {
  return em.findOne(InteractionRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/** An interaction its creator or its supporter reads; 404 to anyone else, as if missing. */
export async function findOwnInteraction(em: EntityManager, id: string, person: string): Promise<InteractionRow> {
  const row = id === "" ? null : await interactionById(em, id);
  if (!row || (row.creator !== person && row.supporter !== person)) throw interactionNotFound();
  return row;
}
