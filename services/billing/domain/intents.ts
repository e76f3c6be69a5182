import type { IntentRequest } from "../../../gen/pf/billing/v1/intents_pb.js";
import { invalid } from "../../kit/handler/problem.js";
import { requireUser } from "../../kit/handler/subjects.js";
import { creditPrice, packPrice, tierPrice, type Catalogue } from "./catalogue.js";
import { payeeOf, PLATFORM, type Movement } from "./ledger.js";
import { requireAmount } from "./money.js";
import { requireChannel } from "./subscriptions.js";
import type { VerifiedReceipt } from "../provider/provider.js";

/**
 * Intent states (designed): requires_action → approved → settled, and
 * requires_action or approved → declined. Settled and declined are final.
 */
export type IntentState = "requires_action" | "approved" | "settled" | "declined";
export type IntentAction = "approve" | "decline" | "settle";

/** What an action does to an intent in a state. */
export type Transition =
  | { kind: "move"; to: IntentState }
  /** Already there: nothing to do, nothing redone (a settled intent settles once). */
  | { kind: "unchanged" }
  /** The intent moved past it to a final state: the action is stale. */
  | { kind: "stale"; detail: string };

const TARGET: Record<IntentAction, IntentState> = { approve: "approved", decline: "declined", settle: "settled" };

const ALLOWED_FROM: Record<IntentAction, readonly IntentState[]> = {
  approve: ["requires_action"],
  decline: ["requires_action", "approved"],
  // A captured payment settles even before its approval arrived (webhooks come out of order),
  // and an app purchase settles from requires_action with its receipt.
  settle: ["requires_action", "approved"],
};

export function transition(from: IntentState, action: IntentAction): Transition {
  if (from === TARGET[action]) return { kind: "unchanged" };
  if (ALLOWED_FROM[action].includes(from)) return { kind: "move", to: TARGET[action] };
  return { kind: "stale", detail: `The intent is already ${from}.` };
}

/** What an intent buys and what billing charges for it. */
export interface Quote {
  product: "credit" | "channel_subscription" | "tip";
  /** Credit: the catalogue pack ("" when bought by amount). */
  pack: string;
  /** Channel subscription: the streamer, plan and tier; tip: the creator paid (as streamer). */
  streamer: string;
  planId: string;
  planVersion: bigint;
  tier: string;
  currency: string;
  price: bigint;
  /** Credit granted (0 for subscriptions). */
  credit: bigint;
}

const NONE = { pack: "", streamer: "", planId: "", planVersion: 0n, tier: "" };

/** Prices the request's one product from billing's catalogue; 400 naming the field at fault. */
export function quote(catalogue: Catalogue, subject: string, product: IntentRequest["product"]): Quote {
  switch (product.case) {
    case "credit": {
      const { pack, credit } = product.value;
      if ((pack === "") === (credit === undefined))
        throw invalid("credit", "A credit purchase names a pack or an amount of credit, not both.");
      if (pack !== "") {
        const priced = packPrice(catalogue, pack); // at most 100 characters: declared
        return { ...NONE, product: "credit", pack, ...priced };
      }
      const amount = requireAmount("credit.credit", credit);
      return { ...NONE, product: "credit", ...creditPrice(catalogue, amount.currency, amount.amount) };
    }
    case "channelSubscription": {
      const wanted = product.value;
      const streamer = requireChannel("channel_subscription.streamer", wanted.streamer);
      if (streamer === subject)
        throw invalid("channel_subscription.streamer", "A subject cannot subscribe to their own channel.");
      // Declared: plan_id required (a pln_ id), plan_version 1 or more, tier at most 40 characters.
      const { tier, currency, price } = tierPrice(catalogue, wanted.tier);
      return {
        ...NONE,
        product: "channel_subscription",
        streamer,
        planId: wanted.planId,
        planVersion: wanted.planVersion,
        tier,
        currency,
        price,
        credit: 0n,
      };
    }
    case "tip": {
      // A tip is charged at face value, within the bounds of credit bought by amount.
      const creator = requireUser("tip.creator", product.value.creator);
      if (creator === subject) throw invalid("tip.creator", "A subject cannot tip themselves.");
      const amount = requireAmount("tip.amount", product.value.amount);
      const { currency, price } = creditPrice(catalogue, amount.currency, amount.amount);
      return { ...NONE, product: "tip", streamer: creator, currency, price, credit: 0n };
    }
    default:
      throw invalid("product", "An intent buys exactly one product: credit, channel_subscription or tip.");
  }
}

/** What a settled intent books: what is needed to post its purchase. */
export interface Purchase {
  product: string;
  subject: string;
  streamer: string;
  currency: string;
  price: bigint;
  creditGranted: bigint;
}

/**
 * The purchase's movements: the price leaves the provider's clearing account;
 * a credit purchase grants its credit (the platform's adjustments account
 * takes any difference between price and credit), a channel subscription pays
 * the streamer's payable (the platform's revenue for the network's channel),
 * a tip the creator's payable.
 */
export function purchaseMovements(purchase: Purchase, provider: string): Movement[] {
  const { currency, price } = purchase;
  const clearing: Movement = { owner: provider, kind: "provider_clearing", currency, amount: -price };
  if (purchase.product === "channel_subscription")
    return [clearing, { ...payeeOf(purchase.streamer), currency, amount: price }];
  if (purchase.product === "tip")
    return [clearing, { owner: purchase.streamer, kind: "payable", currency, amount: price }];
  const movements: Movement[] = [
    clearing,
    { owner: purchase.subject, kind: "credit", currency, amount: purchase.creditGranted },
  ];
  if (purchase.creditGranted !== price)
    movements.push({ owner: PLATFORM, kind: "adjustments", currency, amount: price - purchase.creditGranted });
  return movements;
}

/** The receipt's fields that do not match the intent it should pay (empty when it pays it). */
export function receiptMismatches(
  intent: { appReference: string; currency: string; price: bigint },
  receipt: VerifiedReceipt,
): string[] {
  const mismatches: string[] = [];
  if (intent.appReference === "" || receipt.appReference !== intent.appReference) mismatches.push("app_reference");
  if (receipt.currency !== intent.currency) mismatches.push("currency");
  if (receipt.amount !== intent.price) mismatches.push("amount");
  return mismatches;
}
