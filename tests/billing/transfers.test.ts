import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { fund, person } from "./support.js";

const t = usePlatform({ services: ["billing"] });
let tips: string;
let reader: string;

beforeAll(async () => {
  tips = await t.token({ kind: "service", svc: "tips", caps: ["billing.transfer.create"] });
  reader = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
});

const transfer = (body: unknown, token = tips) => t.http("POST", "/billing/api/v1/transfers", { token, body });
const balance = (subject: string) => t.http("GET", `/billing/api/v1/balances/${subject}`, { token: reader });

describe("transfers", () => {
  it("moves spendable credit to the creator's payable in one balanced transaction (201)", async () => {
    const [fan, creator] = [person("fan"), person("cr")];
    await fund(t, fan, 1000n);
    const answer = await transfer({
      from_subject: fan,
      to_subject: creator,
      amount: { minor_units: 300, currency: "USD" },
      idempotency_key: `k-${fan}`,
      reason: "tip",
      reference: { service: "tips", kind: "interaction", id: "tip_1" },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.transfer).toMatchObject({
      from_subject: fan,
      to_subject: creator,
      amount: { minor_units: "300", currency: "USD" },
      from_credit_after: "700",
    });
    expect(answer.body.transfer.id).toMatch(/^ltx_/);
    expect((await balance(fan)).body.balances).toEqual([
      expect.objectContaining({ currency: "USD", spendable_credit: "700", creator_payable: "0" }),
    ]);
    expect((await balance(creator)).body.balances).toEqual([
      expect.objectContaining({ currency: "USD", spendable_credit: "0", creator_payable: "300" }),
    ]);
  });

  it("refuses a transfer the credit does not cover (409 insufficient_funds) and moves nothing", async () => {
    const [fan, creator] = [person("fan"), person("cr")];
    await fund(t, fan, 100n);
    const answer = await transfer({
      from_subject: fan,
      to_subject: creator,
      amount: { minor_units: 101, currency: "USD" },
      idempotency_key: `k-${fan}`,
    });
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe("insufficient_funds");
    expect((await balance(fan)).body.balances[0].spendable_credit).toBe("100");
  });

  it("applies a retried key once and refuses the key with another body", async () => {
    const [fan, creator] = [person("fan"), person("cr")];
    await fund(t, fan, 1000n);
    const body = {
      from_subject: fan,
      to_subject: creator,
      amount: { minor_units: 10, currency: "USD" },
      idempotency_key: `once-${fan}`,
    };
    const first = await transfer(body);
    const again = await transfer(body);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect((await balance(fan)).body.balances[0].spendable_credit).toBe("990");
    const other = await transfer({ ...body, amount: { minor_units: 11, currency: "USD" } });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("idempotency.mismatch");
  });
});

describe("transaction history", () => {
  it("answers whole transactions newest first, a page at a time, each once", async () => {
    const [fan, creator] = [person("fan"), person("cr")];
    await fund(t, fan, 1000n);
    for (let i = 1; i <= 5; i++) {
      await transfer({
        from_subject: fan,
        to_subject: creator,
        amount: { minor_units: i, currency: "USD" },
        idempotency_key: `h${i}-${fan}`,
      });
    }
    const seen: { id: string; kind: string; entries: unknown[] }[] = [];
    let cursor = "";
    do {
      const answer = await t.http(
        "GET",
        `/billing/api/v1/balances/${fan}/transactions?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        { token: reader },
      );
      expect(answer.status).toBe(200);
      expect(answer.body.transactions.length).toBeLessThanOrEqual(2);
      seen.push(...answer.body.transactions);
      cursor = answer.body.next_cursor;
    } while (cursor !== "");
    expect(seen.map((tx) => tx.kind)).toEqual([
      ...Array(5).fill("TRANSACTION_KIND_TRANSFER"),
      "TRANSACTION_KIND_ADJUSTMENT",
    ]);
    expect(new Set(seen.map((tx) => tx.id)).size).toBe(6);
    expect(seen.map((tx) => tx.id)).toEqual([...seen.map((tx) => tx.id)].sort().reverse());
    // Each transaction comes with all its entries, the counterparty's too.
    expect(seen[0].entries).toEqual([
      { owner: fan, kind: "ACCOUNT_KIND_CREDIT", amount: { minor_units: "-5", currency: "USD" }, balance_after: "985" },
      {
        owner: creator,
        kind: "ACCOUNT_KIND_PAYABLE",
        amount: { minor_units: "5", currency: "USD" },
        balance_after: "15",
      },
    ]);
  });
});
