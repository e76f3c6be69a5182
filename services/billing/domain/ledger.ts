import { AccountKind, TransactionKind } from "../../../gen/pf/billing/v1/ledger_pb.js";
import { problem } from "../../kit/handler/problem.js";
import { MAX_MINOR_UNITS } from "./money.js";

/** Account kinds as stored. Subject kinds never go below zero; system kinds are the other side of money entering or leaving. */
export type SubjectKind = "credit" | "payable" | "pending_payout" | "import_hold";
export type SystemKind = "provider_clearing" | "payouts" | "adjustments" | "imports" | "revenue";
export type Kind = SubjectKind | SystemKind;

/** Owner of the platform's own system accounts other than provider clearing (owned by the provider). */
export const PLATFORM = "platform";

/** The system kinds: their balances go below zero (reconciliation tells them apart from subjects'). */
export const SYSTEM_KINDS: readonly SystemKind[] = [
  "provider_clearing",
  "payouts",
  "adjustments",
  "imports",
  "revenue",
];
const systemKinds = new Set<Kind>(SYSTEM_KINDS);

/** The channel of the network's own membership plans: what it earns goes to the platform's revenue, not to a person. */
export const NETWORK = "network";

/** Who is paid for a channel subscription: the streamer's payable, or the platform's revenue for the network's channel. */
export function payeeOf(streamer: string): { owner: string; kind: Kind } {
  return streamer === NETWORK ? { owner: PLATFORM, kind: "revenue" } : { owner: streamer, kind: "payable" };
}

export function isSystemKind(kind: Kind): kind is SystemKind {
  return systemKinds.has(kind);
}

export type TxKind =
  | "purchase"
  | "transfer"
  | "subscription"
  | "cashout_request"
  | "cashout_approval"
  | "cashout_denial"
  | "recycle"
  | "adjustment"
  | "import_hold"
  | "import_release";

/** One signed change of one account: positive adds to its balance. */
export interface Movement {
  owner: string;
  kind: Kind;
  currency: string;
  amount: bigint;
}

export type AccountKey = string;

export function accountKey(account: { owner: string; kind: string; currency: string }): AccountKey {
  return `${account.owner}\u0000${account.kind}\u0000${account.currency}`;
}

/**
 * Debits equal credits: a posting's amounts sum to zero in every currency,
 * none is zero, and it touches each account once.
 */
export function requireBalanced(movements: Movement[]): void {
  const sums = new Map<string, bigint>();
  const seen = new Set<AccountKey>();
  for (const movement of movements) {
    if (movement.amount === 0n) throw new Error("a ledger movement of zero");
    const key = accountKey(movement);
    if (seen.has(key)) throw new Error(`a posting touches ${key} twice`);
    seen.add(key);
    sums.set(movement.currency, (sums.get(movement.currency) ?? 0n) + movement.amount);
  }
  for (const [currency, sum] of sums) {
    if (sum !== 0n)
      throw problem(422, "ledger.unbalanced", `The lines do not balance in ${currency}: they sum to ${sum}.`, {
        currency,
        sum: sum.toString(),
      });
  }
}

const SHORT_DETAIL: Record<SubjectKind, string> = {
  credit: "The spendable credit is short of the amount.",
  payable: "The creator payable is short of the amount.",
  pending_payout: "The pending payouts are short of the amount.",
  import_hold: "The import hold is short of the amount.",
};

/** The balance a movement leaves: a subject's short balance is refused (409 insufficient_funds). */
export function balanceAfter(movement: Movement, current: bigint): bigint {
  const balance = current + movement.amount;
  if (!isSystemKind(movement.kind)) {
    if (balance < 0n) {
      throw problem(409, "insufficient_funds", SHORT_DETAIL[movement.kind], {
        subject: movement.owner,
        balance: movement.kind,
        currency: movement.currency,
        available: current.toString(),
      });
    }
    if (balance > MAX_MINOR_UNITS)
      throw problem(409, "billing.balance_limit", `A balance holds at most ${MAX_MINOR_UNITS} minor units.`);
  }
  return balance;
}

const KIND_TO_PROTO: Record<Kind, AccountKind> = {
  credit: AccountKind.CREDIT,
  payable: AccountKind.PAYABLE,
  pending_payout: AccountKind.PENDING_PAYOUT,
  import_hold: AccountKind.IMPORT_HOLD,
  provider_clearing: AccountKind.PROVIDER_CLEARING,
  payouts: AccountKind.PAYOUTS,
  adjustments: AccountKind.ADJUSTMENTS,
  imports: AccountKind.IMPORTS,
  revenue: AccountKind.REVENUE,
};

export function accountKindToProto(kind: string): AccountKind {
  return KIND_TO_PROTO[kind as Kind] ?? AccountKind.UNSPECIFIED;
}

export function accountKindFromProto(kind: AccountKind): Kind | undefined {
  return (Object.keys(KIND_TO_PROTO) as Kind[]).find((k) => KIND_TO_PROTO[k] === kind);
}

const TX_TO_PROTO: Record<TxKind, TransactionKind> = {
  purchase: TransactionKind.PURCHASE,
  transfer: TransactionKind.TRANSFER,
  subscription: TransactionKind.SUBSCRIPTION,
  cashout_request: TransactionKind.CASHOUT_REQUEST,
  cashout_approval: TransactionKind.CASHOUT_APPROVAL,
  cashout_denial: TransactionKind.CASHOUT_DENIAL,
  recycle: TransactionKind.RECYCLE,
  adjustment: TransactionKind.ADJUSTMENT,
  import_hold: TransactionKind.IMPORT_HOLD,
  import_release: TransactionKind.IMPORT_RELEASE,
};

export function transactionKindToProto(kind: string): TransactionKind {
  return TX_TO_PROTO[kind as TxKind] ?? TransactionKind.UNSPECIFIED;
}
