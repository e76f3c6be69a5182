import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";

/** One coin operation as the generator draws it: who, how much, and whether it is a retry of an earlier key. */
type Operation =
  | { kind: "credit"; who: number; amount: number; key: number }
  | { kind: "debit"; who: number; amount: number }
  | { kind: "transfer"; from: number; to: number; amount: number; key: number };

const PEOPLE = 4;
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant("credit" as const),
    who: fc.nat(PEOPLE - 1),
    amount: fc.integer({ min: 1, max: 50 }),
    key: fc.nat(20),
  }),
  fc.record({ kind: fc.constant("debit" as const), who: fc.nat(PEOPLE - 1), amount: fc.integer({ min: 1, max: 60 }) }),
  fc.record({
    kind: fc.constant("transfer" as const),
    from: fc.nat(PEOPLE - 1),
    to: fc.nat(PEOPLE - 1),
    amount: fc.integer({ min: 1, max: 40 }),
    key: fc.nat(20),
  }),
);

const t = usePlatform({ services: ["network"] });
let token: string;
let run = 0;
beforeAll(async () => {
  token = await t.token({
    kind: "service",
    svc: "community",
    caps: ["network.coins.credit", "network.coins.debit", "network.coins.transfer"],
    app_id: "app_prop",
  });
});

describe("the coin ledger under any mix of parallel operations", () => {
  it("keeps every balance equal to its entries, never negative, and applies each keyed request once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 10, maxLength: 60 }), async (operations) => {
        const round = ++run;
        const person = (i: number) => `usr_p${round}x${i}`;
        const send = (op: Operation) => {
          switch (op.kind) {
            case "credit":
              // Keys repeat on purpose: a repeated key with the same body is a retry, with another body a mismatch.
              return t.http("POST", "/network/internal/coins/credit", {
                token,
                body: { subject: person(op.who), amount: op.amount, idempotency_key: `c${round}-${op.key}` },
              });
            case "debit":
              return t.http("POST", "/network/internal/coins/debit", {
                token,
                body: { subject: person(op.who), amount: op.amount },
              });
            case "transfer":
              return t.http("POST", "/network/internal/coins/transfer", {
                token,
                body: {
                  from_subject: person(op.from),
                  to_subject: person(op.to),
                  amount: op.amount,
                  idempotency_key: `t${round}-${op.key}`,
                },
              });
          }
        };
        const answers = await Promise.all(operations.map(send));

        // Every answer is a success or one of the refusals the spec names: never a 500.
        const unexpected = answers.filter(
          (a) =>
            a.status !== 200 &&
            !["insufficient_funds", "idempotency.mismatch", "request.invalid"].includes(a.body?.code),
        );
        expect(unexpected.map((a) => a.body)).toEqual([]);

        const db = t.platform.contexts.get("network")!.orm.em.getConnection();
        const people = Array.from({ length: PEOPLE }, (_, i) => person(i));
        const accounts = await db.execute<{ subject: string; balance: string; entries: string }[]>(
          `select a.subject, a.balance,
                  (select coalesce(sum(delta), 0) from network.coin_entries e where e.app_id = a.app_id and e.subject = a.subject) as entries
           from network.coin_accounts a where a.app_id = 'app_prop' and a.subject in (?)`,
          [people],
        );
        for (const account of accounts) {
          expect(BigInt(account.balance)).toBeGreaterThanOrEqual(0n);
          expect(account.entries).toBe(account.balance);
        }

        // Transfers move coins without making or losing any: the total is what the distinct credits brought in, less the debits.
        const credited = new Map<string, number>();
        operations.forEach((op, i) => {
          if (op.kind === "credit" && answers[i].status === 200) credited.set(`${op.key}`, op.amount);
        });
        const debited = operations.reduce(
          (sum, op, i) => sum + (op.kind === "debit" && answers[i].status === 200 ? op.amount : 0),
          0,
        );
        const total = accounts.reduce((sum, a) => sum + Number(a.balance), 0);
        expect(total).toBe([...credited.values()].reduce((a, b) => a + b, 0) - debited);

        // Each key applied once: one credit entry per distinct successful credit key, one transfer (two entries) per transfer key.
        const [creditEntries] = await db.execute<{ n: string }[]>(
          `select count(*) as n from network.coin_entries where app_id = 'app_prop' and subject in (?) and delta > 0 and transfer_id is null`,
          [people],
        );
        expect(Number(creditEntries.n)).toBe(credited.size);
        const transferKeys = new Set(
          operations
            .filter((op, i) => op.kind === "transfer" && answers[i].status === 200)
            .map((op) => (op as { key: number }).key),
        );
        const transfers = await db.execute<{ entries: string }[]>(
          `select count(*) as entries from network.coin_entries where app_id = 'app_prop' and subject in (?) and transfer_id is not null group by transfer_id`,
          [people],
        );
        expect(transfers).toHaveLength(transferKeys.size);
        expect(transfers.every((transfer) => transfer.entries === "2")).toBe(true);
      }),
      { numRuns: 15 },
    );
  });
});
