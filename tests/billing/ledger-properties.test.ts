import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { BillingAdminService } from "../../gen/pf/billing/v1/admin_pb.js";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import { AccountKind } from "../../gen/pf/billing/v1/ledger_pb.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { usePlatform } from "../support/platform.js";
import type { Delivery } from "../../services/billing/provider/test.js";
import { testProvider } from "./payments.js";
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
  fc.record({
    kind: fc.constant("cashout" as const),
    who,
    amount,
    key,
    decide: fc.constantFrom("approve" as const, "deny" as const, "keep" as const),
  }),
  fc.record({ kind: fc.constant("recycle" as const), who, amount, key }),
);

// Escrow of zero hours and a minimum of one unit let cashouts be decided at once.
const t = usePlatform({
  services: ["billing"],
  env: { PF_BILLING_ESCROW_HOURS: "0", PF_BILLING_CASHOUT_MINIMUM: "1" },
});
let billing: ReturnType<typeof t.client<typeof BillingService>>;
let admin: ReturnType<typeof t.client<typeof BillingAdminService>>;
let cashouts: ReturnType<typeof t.client<typeof BillingService>>;
let round = 0;

beforeAll(async () => {
  const caps = ["billing.transfer.create", "billing.intent.create", "billing.cashout.request", "billing.balance.read"];
  billing = t.client(BillingService, await t.token({ kind: "service", svc: "tips", caps }));
  admin = t.client(BillingAdminService, await t.token({ kind: "service", svc: "ops", caps: ["billing.ledger.admin"] }));
  cashouts = t.client(
    BillingService,
    await t.token({ kind: "service", svc: "payouts", caps: ["billing.cashout.manage"] }),
  );
});

const usd = (minor: number) => ({ minorUnits: BigInt(minor), currency: "USD" });

/** The ledger transaction each operation's request writes. */
const KIND_OF: Record<Operation["kind"], string> = {
  fund: "adjustment",
  adjust: "adjustment",
  transfer: "transfer",
  purchase: "purchase",
  cashout: "cashout_request",
  recycle: "recycle",
};

/** The refusals a random mix may meet; anything else fails the property. */
const EXPECTED = new Set(["insufficient_funds", "idempotency.mismatch", "cashout.decided"]);

/** "sent" when the operation went through, "skipped" for a no-op draw, else the refusal's code. */
async function refusalOf(work: Promise<boolean>): Promise<string> {
  try {
    return (await work) ? "sent" : "skipped";
  } catch (error) {
    const { code } = problemOf(error);
    if (!EXPECTED.has(code)) throw error;
    return code;
  }
}

describe("the money ledger under any mix of parallel operations", () => {
  it("keeps every transaction balanced, no balance negative, and applies each keyed request once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 40, maxLength: 160 }), async (operations) => {
        const r = ++round;
        const person = (i: number) => `usr_q${r}x${i}`;
        const k = (op: Operation) => `prop-${r}-${op.kind}-${op.key}`;
        /** Sends one operation; false when the draw is a no-op (paying oneself). */
        const send = async (op: Operation): Promise<boolean> => {
          switch (op.kind) {
            case "fund":
              await admin.postAdjustment({
                reason: "fund",
                idempotencyKey: k(op),
                lines: [
                  { owner: person(op.who), kind: AccountKind.CREDIT, amount: usd(op.amount) },
                  { owner: "", kind: AccountKind.ADJUSTMENTS, amount: usd(-op.amount) },
                ],
              });
              return true;
            case "adjust":
              if (op.from === op.to) return false;
              await admin.postAdjustment({
                reason: "move",
                idempotencyKey: k(op),
                lines: [
                  { owner: person(op.from), kind: AccountKind.CREDIT, amount: usd(-op.amount) },
                  { owner: person(op.to), kind: AccountKind.PAYABLE, amount: usd(op.amount) },
                ],
              });
              return true;
            case "transfer":
              if (op.from === op.to) return false;
              await billing.createTransfer({
                fromSubject: person(op.from),
                toSubject: person(op.to),
                amount: usd(op.amount),
                idempotencyKey: k(op),
              });
              return true;
            case "purchase":
              await purchase(person(op.who), op.amount, k(op));
              return true;
            case "cashout": {
              const answer = await billing.requestCashout({
                subject: person(op.who),
                amount: usd(op.amount),
                idempotencyKey: k(op),
              });
              const id = answer.result.case === "cashout" ? answer.result.value.id : "";
              if (op.decide === "approve") await cashouts.approveCashout({ id, payoutReference: `po-${id}` });
              if (op.decide === "deny") await cashouts.denyCashout({ id, reason: "no" });
              return true;
            }
            case "recycle":
              await billing.recyclePayable({ subject: person(op.who), amount: usd(op.amount), idempotencyKey: k(op) });
              return true;
          }
        };
        // Many parallel clients: every operation at once.
        const outcomes = await Promise.all(operations.map((op) => refusalOf(send(op))));

        // Each key that succeeded moved money once, however often it was sent: one ledger transaction per key.
        const applied = new Map<string, Set<string>>();
        operations.forEach((op, i) => {
          if (outcomes[i] !== "sent") return;
          const kind = KIND_OF[op.kind];
          applied.set(kind, (applied.get(kind) ?? new Set()).add(k(op)));
        });
        const written = await billingOf(t)
          .orm.em.getConnection()
          .execute<{ kind: string; n: string }[]>(
            `select t.kind, count(distinct t.id) as n from billing.transactions t join billing.entries e on e.transaction_id = t.id
           where e.owner like ? and t.kind in ('transfer', 'adjustment', 'purchase', 'cashout_request', 'recycle') group by t.kind`,
            [`usr_q${r}x%`],
          );
        expect(Object.fromEntries(written.map((row) => [row.kind, Number(row.n)]))).toEqual(
          Object.fromEntries([...applied].map(([kind, keys]) => [kind, keys.size])),
        );

        const report = await admin.runReconciliation({});
        expect(report.result.case).toBe("reconciliation");
        if (report.result.case === "reconciliation") expect(report.result.value.imbalances).toEqual([]);
      }),
      { numRuns: 25 },
    );
    // With batching on (the default): parallel transfers shared commits, so the property held for batches.
    const [{ transfers, commits }] = await billingOf(t)
      .orm.em.getConnection()
      .execute<{ transfers: number; commits: number }[]>(
        `select count(*)::int as transfers, count(distinct xmin::text)::int as commits from billing.transactions where kind = 'transfer'`,
      );
    expect(commits).toBeLessThan(transfers);
    // 25 rounds of up to 160 parallel operations: far past the default 30 s on a loaded two-core machine.
  }, 180_000);
});

/**
 * A credit purchase through the test-mode provider: the buyer approves, the
 * approval webhook and two captures race, and the capture's webhook arrives
 * twice. It settles once.
 */
async function purchase(subject: string, credit: number, idempotencyKey: string) {
  const created = await billing.createIntent({
    subject,
    product: { case: "credit", value: { credit: usd(credit) } },
    idempotencyKey,
  });
  const { id, providerOrderId } = created.intent!;
  const provider = testProvider(t);
  const webhook = (delivery: Delivery) =>
    billing.receiveProviderWebhook(
      { provider: "test", payload: Buffer.from(delivery.body) },
      { headers: { ...delivery.headers } },
    );
  const approved = await provider.approve(providerOrderId);
  await Promise.all([webhook(approved), billing.captureIntent({ id }), billing.captureIntent({ id })]);
  const captured = (await provider.deliveries(providerOrderId)).find(
    (delivery) => delivery.type === "payment.captured",
  )!;
  await Promise.all([webhook(captured), webhook(captured)]);
}
