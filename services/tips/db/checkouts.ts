import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";
import { deliveryOnSettle, type InteractionKind, type Moderation } from "../domain/checkouts.js";
import { matchesWordFilter } from "../domain/profiles.js";
import { interactionChanged, subjects } from "../events.js";
import { CheckoutRow, GoalRow, InteractionRow, ModerationRow } from "./entities.js";
import { publishGoal } from "./goals.js";
import { interactionToProto } from "./interactions.js";
import { loadProfile } from "./profiles.js";

/** Who holds a paid message matching the creator's word filter, in the moderation log. */
export const WORD_FILTER = "word_filter";

/**
 * Pending checkouts due for another look, the longest unlooked first (at most
 * 100): pending since before `before`, and backing off: a checkout is looked
 * at again once as long has passed since the last look as it had been pending
 * then (at most `backoffMaxMs`), so intents the buyer never pays (billing keeps
 * them open) are asked about less and less and never crowd out a checkout a
 * crash left behind.
 */
export async function dueCheckouts(
  em: EntityManager,
  before: Date,
  now: Date,
  backoffMaxMs: number,
): Promise<CheckoutRow[]> {
  const ids = await sql<{ id: string }>(
    em,
    `select id from {checkouts}
      where payment_state = 'pending' and updated_at <= ?
        and updated_at <= ?::timestamptz - least(updated_at - created_at, ? * interval '1 millisecond')
      order by updated_at limit 100`,
    [before, now, backoffMaxMs],
  );
  if (ids.length === 0) return [];
  return em.find(CheckoutRow, { id: { $in: ids.map((row) => row.id) } }, { orderBy: { updatedAt: "asc" } });
}

/** The checkout with this id, known to exist (its transaction committed). */
export function checkoutById(em: EntityManager, id: string): Promise<CheckoutRow> {
  return em.findOneOrFail(CheckoutRow, { id });
}

/** The id of the checkout paying through this billing intent, if any. */
export async function checkoutOfIntent(em: EntityManager, intentId: string): Promise<string | undefined> {
  return (await em.findOne(CheckoutRow, { intentId }, { fields: ["id"] }))?.id;
}

/**
 * Records a pending checkout under a new id; a tip or media request shows as a
 * pending interaction from now on, a paid message exists only once billing
 * settles it.
 */
export async function insertCheckout(
  em: EntityManager,
  checkout: Omit<RequiredEntityData<CheckoutRow>, "id">,
  at: Date,
): Promise<CheckoutRow> {
  const row = em.create(CheckoutRow, { ...checkout, id: newId("int") });
  if (row.kind !== "paid_message") em.create(InteractionRow, pendingInteraction(row, at));
  await em.flush();
  return row;
}

/** Keeps the intent billing made for a pending checkout: its id and where the buyer pays. */
export async function keepIntent(
  em: EntityManager,
  row: CheckoutRow,
  intent: { id: string; checkoutUrl: string },
  at: Date,
): Promise<void> {
  Object.assign(row, { intentId: intent.id, checkoutUrl: intent.checkoutUrl, updatedAt: at });
  await em.flush();
}

/** Marks a checkout still pending as looked at now: it goes to the back of the recovery's queue. */
export async function markLookedAt(em: EntityManager, id: string, at: Date): Promise<void> {
  await em.nativeUpdate(CheckoutRow, { id, paymentState: "pending" }, { updatedAt: at });
}

/** Locks a checkout for a change, inside the caller's transaction; null when there is none. */
export function lockCheckout(em: EntityManager, id: string): Promise<CheckoutRow | null> {
  return em.findOne(CheckoutRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/**
 * Settles a locked checkout once (a settled one is left as it is), in the
 * caller's transaction: the interaction is settled (a paid message's row is
 * made only now, held when it matches the word filter),
 * tips.interaction.settled is published, and so is the goal it counts toward.
 * Billing's word is the payment state: a checkout tips took for declined (a
 * refusal billing answered after all committed) is settled when billing says
 * the money moved.
 */
export async function settleCheckout(
  em: EntityManager,
  row: CheckoutRow,
  billing: { transactionId?: string; intentId?: string },
  at: Date,
): Promise<void> {
  if (row.paymentState === "settled") return;
  Object.assign(row, {
    paymentState: "settled",
    declineReason: "",
    settledAt: at,
    updatedAt: at,
    transactionId: billing.transactionId || row.transactionId,
    intentId: billing.intentId || row.intentId,
  });
  let interaction = await em.findOne(InteractionRow, { id: row.id });
  let moderation: Moderation = "visible";
  if (!interaction) {
    const profile = await loadProfile(em, row.creator);
    if (row.kind === "paid_message" && matchesWordFilter(profile?.wordFilter, row.message)) moderation = "held";
    interaction = em.create(InteractionRow, {
      ...pendingInteraction(row, at),
      moderation,
    });
    if (moderation === "held") {
      em.create(ModerationRow, {
        id: newId("mod"),
        interactionId: row.id,
        creator: row.creator,
        action: "hold",
        actor: WORD_FILTER,
        relayedBy: "",
        reason: "word filter",
        createdAt: at,
      });
    }
  }
  Object.assign(interaction, {
    paymentState: "settled",
    deliveryState: deliveryOnSettle(row.kind as InteractionKind, interaction.moderation as Moderation),
    transactionId: row.transactionId,
    intentId: row.intentId,
    settledAt: at,
    updatedAt: at,
  });
  await em.flush();
  await interactionChanged(em, subjects.interactionSettled, interactionToProto(interaction), at);
  if (row.goalId) {
    const goal = await em.findOne(GoalRow, { id: row.goalId });
    if (goal) await publishGoal(em, goal, at);
  }
}

/** Declines a locked pending checkout for good, and its interaction (tips, media requests) with it; nothing is delivered. */
export async function declineCheckout(em: EntityManager, row: CheckoutRow, reason: string, at: Date): Promise<void> {
  if (row.paymentState !== "pending") return;
  Object.assign(row, { paymentState: "declined", declineReason: reason.slice(0, 500), updatedAt: at });
  const interaction = await em.findOne(InteractionRow, { id: row.id });
  if (interaction) Object.assign(interaction, { paymentState: "declined", deliveryState: "canceled", updatedAt: at });
  await em.flush();
}

/** The interaction a checkout stands for, before its payment settles. */
function pendingInteraction(row: CheckoutRow, at: Date) {
  return {
    id: row.id,
    creator: row.creator,
    supporter: row.supporter,
    kind: row.kind,
    currency: row.currency,
    amount: row.amount,
    message: row.message,
    goalId: row.goalId,
    mediaUrl: row.mediaUrl,
    mediaSeconds: row.mediaSeconds,
    method: row.method,
    paymentState: "pending",
    deliveryState: "pending",
    moderation: "visible",
    intentId: row.intentId,
    transactionId: null,
    provider: null,
    providerRef: null,
    supporterName: "",
    createdAt: at,
    updatedAt: at,
    settledAt: null,
  };
}
