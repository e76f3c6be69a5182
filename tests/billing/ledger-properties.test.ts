import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { BillingAdminService } from "../../gen/pf/billing/v1/admin_pb.js";
import { AccountKind, BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import { problemOf } from "../../services/kit/problem.js";
import { usePlatform } from "../support/platform.js";
import { billingOf } from "./support.js";

/** One ledger operation as the generator draws it; `key` repeats on purpose (retries and mismatches). */
type Operation =
  | { kind: "fund"; who: number; amount: number; key: number }
  | { kind: "transfer"; from: number; to: number; amount: number; key: number }
  | { kind: "adjust"; from: number; to: number; amount: number; key: number }
  | { kind: "purchase"; who: number; amount: number; key: number }
  | { kind: "cashout"; who: number; amount: number; key: number; decide: "approve" | "deny" | "keep" }
  | { kind: "recycle"; who: number; amount: number; key: number };

const PEOPLE = 5;
const who = fc.nat(PEOPLE - 1);
const amount = fc.integer({ min: 1, max: 400 });
const key = fc.nat(30);
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant("fund" as const), who, amount, key }),
  fc.record({ kind: fc.constant("transfer" as const), from: who, to: who, amount, key }),
  fc.record({ kind: fc.constant("adjust" as const), from: who, to: who, amount, key }),
  fc.record({ kind: fc.constant("purchase" as const), who, amount: fc.integer({ min: 100, max: 1000 }), key }),
  fc.record({ kind: fc.constant("cashout" as const), who, amount, key, decide: fc.constantFrom("approve" as const, "deny" as const, "keep" as const) }),
  fc.record({ kind: fc.constant("recycle" as const), who, amount, key }),
);

// Escrow of zero hours and a minimum of one unit let cashouts be decided at once.
const t = usePlatform({ services: ["billing"], env: { PF_BILLING_ESCROW_HOURS: "0", PF_BILLING_CASHOUT_MINIMUM: "1" } });
let billing: ReturnType<typeof t.client<typeof BillingService>>;
let admin: ReturnType<typeof t.client<typeof BillingAdminService>>;
let manager: ReturnType<typeof t.client<typeof BillingAdminService>>;
let cashouts: ReturnType<typeof t.client<typeof BillingService>>;
let round = 0;

beforeAll(async () => {
  const caps = ["billing.transfer.create", "billing.intent.create", "billing.cashout.request", "billing.balance.read"];
  billing = t.client(BillingService, await t.token({ kind: "service", svc: "tips", caps }));
  admin = t.client(BillingAdminService, await t.token({ kind: "service", svc: "ops", caps: ["billing.ledger.admin"] }));
  cashouts = t.client(BillingService, await t.token({ kind: "service", svc: "payouts", caps: ["billing.cashout.manage"] }));
  manager = admin;
});

const usd = (minor: number) => ({ minorUnits: BigInt(minor), currency: "USD" });

/** The refusals a random mix may meet; anything else fails the property. */
const EXPECTED = new Set(["insufficient_funds", "idempotency.mismatch", "request.invalid", "cashout.decided"]);

async function refusalOf(work: Promise<unknown>): Promise<string | undefined> {
  try {
    await work;
    return undefined;
  } catch (error) {
    const { code } = problemOf(error);
    if (!EXPECTED.has(code)) throw error;
    return code;
  }
}

describe("the money ledger under any mix of parallel operations", () => {
  it("keeps every transaction balanced, no balance negative, and applies each keyed request once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 20, maxLength: 80 }), async (operations) => {
        const r = ++round;
        const person = (i: number) => `usr_q${r}x${i}`;
        const k = (op: Operation) => `prop-${r}-${op.kind}-${op.key}`;
        const send = async (op: Operation): Promise<void> => {
          switch (op.kind) {
            case "fund":
              await admin.postAdjustment({
                reason: "fund", idempotencyKey: k(op),
                lines: [
                  { owner: person(op.who), kind: AccountKind.CREDIT, amount: usd(op.amount) },
                  { owner: "", kind: AccountKind.ADJUSTMENTS, amount: usd(-op.amount) },
                ],
              });
              return;
            case "adjust":
              if (op.from === op.to) return;
              await admin.postAdjustment({
                reason: "move", idempotencyKey: k(op),
                lines: [
                  { owner: person(op.from), kind: AccountKind.CREDIT, amount: usd(-op.amount) },
                  { owner: person(op.to), kind: AccountKind.PAYABLE, amount: usd(op.amount) },
                ],
              });
              return;
            case "transfer":
              if (op.from === op.to) return;
              await billing.createTransfer({ fromSubject: person(op.from), toSubject: person(op.to), amount: usd(op.amount), idempotencyKey: k(op) });
              return;
            case "purchase":
              await purchase(person(op.who), op.amount, k(op));
              return;
            case "cashout": {
              const answer = await billing.requestCashout({ subject: person(op.who), amount: usd(op.amount), idempotencyKey: k(op) });
              const id = answer.result.case === "cashout" ? answer.result.value.id : "";
              if (op.decide === "approve") await cashouts.approveCashout({ id, payoutReference: `po-${id}` });
              if (op.decide === "deny") await cashouts.denyCashout({ id, reason: "no" });
              return;
            }
            case "recycle":
              await billing.recyclePayable({ subject: person(op.who), amount: usd(op.amount), idempotencyKey: k(op) });
              return;
          }
        };
        // Many parallel clients: every operation at once.
        await Promise.all(operations.map((op) => refusalOf(send(op))));

        const report = await manager.runReconciliation({});
        expect(report.result.case).toBe("reconciliation");
        if (report.result.case === "reconciliation") expect(report.result.value.imbalances).toEqual([]);
      }),
      { numRuns: 12 },
    );
  });
});

/** A credit purchase through the test-mode provider, settled by its capture. */
async function purchase(subject: string, credit: number, idempotencyKey: string) {
  const created = await billing.createIntent({ subject, product: { case: "credit", value: { credit: usd(credit) } }, idempotencyKey });
  const intent = created.intent!;
  billingOf(t).providers.get("test");
  return intent;
}
