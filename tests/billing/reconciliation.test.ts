import { beforeAll, describe, expect, it } from "vitest";
import { post } from "../../services/billing/db/ledger.js";
import { billingReference } from "../../services/billing/domain/references.js";
import { newId } from "../../services/kit/handler/ids.js";
import { usePlatform } from "../support/platform.js";
import { billingOf, fund, person } from "./support.js";

const t = usePlatform({ services: ["billing"] });
let admin: string;
let tips: string;

beforeAll(async () => {
  admin = await t.token({ kind: "service", svc: "ops", caps: ["billing.ledger.admin"] });
  tips = await t.token({ kind: "service", svc: "tips", caps: ["billing.transfer.create"] });
});

interface Imbalance {
  kind: string;
  currency: string;
  ref: string;
  expected: string;
  actual: string;
  detail: string;
}

const reconcile = async () => {
  const answer = await t.http("GET", "/billing/api/v1/admin/reconcile", { token: admin });
  expect(answer.status).toBe(200);
  return answer.body.reconciliation as { id: string; balanced: boolean; imbalances: Imbalance[] } & Record<
    string,
    unknown
  >;
};
/** The imbalances a run reports about one transaction, owner, intent or event. */
const about = async (ref: string) => (await reconcile()).imbalances.filter((imbalance) => imbalance.ref === ref);

const sql = (text: string, params: unknown[] = []) => billingOf(t).orm.em.fork().getConnection().execute(text, params);
/** Plants rows past the ledger's triggers (balanced inserts, immutable rows), as only a bug or a hand in the database could. */
const pastTriggers = (text: string) => sql(`begin; set local session_replication_role = replica; ${text}; commit;`);

/** A purchase posting: the provider's clearing account pays the subject's credit. */
const purchase = (subject: string, amount: bigint, intentId?: string) => {
  const ctx = billingOf(t);
  return ctx.transaction((em) =>
    post(em, {
      kind: "purchase",
      movements: [
        { owner: "test", kind: "provider_clearing", currency: "USD", amount: -amount },
        { owner: subject, kind: "credit", currency: "USD", amount },
      ],
      reference: intentId ? billingReference("intent", intentId) : undefined,
      createdBy: "test",
      at: ctx.clock.now(),
    }),
  );
};
const intent = async (subject: string, status: string, price: number, transactionId: string | null = null) => {
  const id = newId("pi");
  await sql(
    `insert into billing.intents (id, subject, status, product, plan_version, currency, price, credit_granted, checkout, provider,
       provider_order_id, transaction_id, created_at, updated_at)
     values (?, ?, ?, 'credit', 0, 'USD', ?, ?, 'web', 'test', ?, ?, now(), now())`,
    [id, subject, status, price, price, `ord_${id}`, transactionId],
  );
  return id;
};
const captured = async (intentId: string) => {
  const id = newId("pev");
  await sql(
    `insert into billing.provider_events (id, provider, provider_event_id, type, provider_order_id, payload, status, received_at)
     values (?, 'test', ?, 'payment.captured', ?, '{}', 'applied', now())`,
    [id, `evt_${id}`, `ord_${intentId}`],
  );
  return id;
};

describe("reconciliation", () => {
  it("reports a clean ledger balanced, stores the run and reads it back", async () => {
    // Every kind of record the checks look at, each as the flows leave it.
    const [fan, creator] = [person("fan"), person("cr")];
    const paid = await intent(fan, "approved", 500);
    const { transactionId } = await purchase(fan, 500n, paid);
    await sql(`update billing.intents set status = 'settled', transaction_id = ?, settled_at = now() where id = ?`, [
      transactionId,
      paid,
    ]);
    await captured(paid);
    const transfer = await t.http("POST", "/billing/api/v1/transfers", {
      token: tips,
      body: {
        from_subject: fan,
        to_subject: creator,
        amount: { minor_units: 200, currency: "USD" },
        idempotency_key: `k-${fan}`,
      },
    });
    expect(transfer.status).toBe(201);
    const ctx = billingOf(t);
    await ctx.transaction(async (em) => {
      const request = await post(em, {
        kind: "cashout_request",
        movements: [
          { owner: creator, kind: "payable", currency: "USD", amount: -150n },
          { owner: creator, kind: "pending_payout", currency: "USD", amount: 150n },
        ],
        createdBy: "test",
        at: ctx.clock.now(),
      });
      await em.getConnection().execute(
        `insert into billing.cashouts (id, subject, currency, amount, status, escrow_until, request_transaction_id, created_at)
         values (?, ?, 'USD', 150, 'requested', now(), ?, now())`,
        [newId("co"), creator, request.transactionId],
        "run",
        em.getTransactionContext(),
      );
    });
    await fund(t, creator, 40n, { currency: "EUR" });

    const report = await reconcile();
    expect(report).toMatchObject({ balanced: true, imbalances: [], ran_by: "svc:ops" });
    expect(report.id).toMatch(/^rec_/);
    expect(Number(report.transactions_checked)).toBeGreaterThanOrEqual(4);
    expect(Number(report.accounts_checked)).toBeGreaterThanOrEqual(6);
    expect(report.payments_checked).toBe("2");

    const stored = await t.http("GET", `/billing/api/v1/admin/reconcile/${report.id}`, { token: admin });
    expect(stored.status).toBe(200);
    expect(stored.body.reconciliation).toEqual(report);
    const missing = await t.http("GET", "/billing/api/v1/admin/reconcile/rec_nothere", { token: admin });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("reconciliation.not_found");
  });

  it("finds a balance that differs from its entries, and the ledger total it breaks", async () => {
    const fan = person("fan");
    await fund(t, fan, 1000n);
    await sql(`update billing.accounts set balance = balance + 5 where owner = ? and kind = 'credit'`, [fan]);
    try {
      const report = await reconcile();
      expect(report.balanced).toBe(false);
      expect(report.imbalances).toEqual([
        {
          kind: "IMBALANCE_KIND_BALANCE_MISMATCH",
          currency: "USD",
          ref: fan,
          expected: "1000",
          actual: "1005",
          detail: expect.stringContaining("credit balance"),
        },
        {
          kind: "IMBALANCE_KIND_LEDGER_TOTAL",
          currency: "USD",
          ref: "USD",
          expected: "0",
          actual: "5",
          detail: expect.any(String),
        },
      ]);
      const stored = await t.http("GET", `/billing/api/v1/admin/reconcile/${report.id}`, { token: admin });
      expect(stored.body.reconciliation).toEqual(report);
    } finally {
      await sql(`update billing.accounts set balance = balance - 5 where owner = ? and kind = 'credit'`, [fan]);
    }
    expect((await reconcile()).balanced).toBe(true);
  });

  it("finds a transaction whose entries do not balance, and entries without an account", async () => {
    const id = newId("ltx");
    const ghost = person("ghost");
    await pastTriggers(`
      insert into billing.transactions (id, kind, created_by, created_at) values ('${id}', 'adjustment', 'test', now());
      insert into billing.entries (transaction_id, owner, kind, currency, amount, balance_after, created_at)
        values ('${id}', '${ghost}', 'credit', 'USD', 7, 7, now())`);
    try {
      expect(await about(id)).toEqual([
        {
          kind: "IMBALANCE_KIND_UNBALANCED_TRANSACTION",
          currency: "USD",
          ref: id,
          expected: "0",
          actual: "7",
          detail: expect.stringContaining(id),
        },
      ]);
      expect(await about(ghost)).toEqual([
        {
          kind: "IMBALANCE_KIND_BALANCE_MISMATCH",
          currency: "USD",
          ref: ghost,
          expected: "7",
          actual: "0",
          detail: expect.stringContaining("no such account"),
        },
      ]);
    } finally {
      await pastTriggers(
        `delete from billing.entries where transaction_id = '${id}'; delete from billing.transactions where id = '${id}'`,
      );
    }
    expect((await reconcile()).balanced).toBe(true);
  });

  it("finds a subject's balance below zero", async () => {
    const fan = person("fan");
    await fund(t, fan, 10n);
    // The table refuses it: only a schema changed by hand lets it in.
    await sql(`alter table billing.accounts drop constraint accounts_balance_check`);
    await sql(`update billing.accounts set balance = -5 where owner = ? and kind = 'credit'`, [fan]);
    try {
      expect((await about(fan)).map(({ kind, actual }) => ({ kind, actual }))).toEqual([
        { kind: "IMBALANCE_KIND_BALANCE_MISMATCH", actual: "-5" },
        { kind: "IMBALANCE_KIND_NEGATIVE_BALANCE", actual: "-5" },
      ]);
    } finally {
      await sql(`update billing.accounts set balance = 10 where owner = ? and kind = 'credit'`, [fan]);
      await sql(`alter table billing.accounts add constraint accounts_balance_check
        check (balance >= 0 or kind in ('provider_clearing', 'payouts', 'adjustments', 'imports'))`);
    }
    expect((await reconcile()).balanced).toBe(true);
  });

  it("finds pending payouts that differ from the cashouts in escrow", async () => {
    const creator = person("cr");
    const cashout = newId("co");
    await sql(
      `insert into billing.cashouts (id, subject, currency, amount, status, escrow_until, request_transaction_id, created_at)
       values (?, ?, 'USD', 300, 'requested', now(), 'ltx_none', now())`,
      [cashout, creator],
    );
    try {
      expect(await about(creator)).toEqual([
        {
          kind: "IMBALANCE_KIND_ESCROW_MISMATCH",
          currency: "USD",
          ref: creator,
          expected: "300",
          actual: "0",
          detail: expect.any(String),
        },
      ]);
    } finally {
      await sql(`update billing.cashouts set status = 'denied' where id = ?`, [cashout]);
    }
    expect((await reconcile()).balanced).toBe(true);
  });

  it("finds settled intents without their purchase, or booked at another amount", async () => {
    const fan = person("fan");
    const unbooked = await intent(fan, "settled", 500, "ltx_none");
    const short = await intent(fan, "settled", 500, "ltx_short");
    await purchase(fan, 400n, short);
    try {
      expect(await about(unbooked)).toEqual([
        {
          kind: "IMBALANCE_KIND_INTENT_UNBOOKED",
          currency: "USD",
          ref: unbooked,
          expected: "-500",
          actual: "0",
          detail: expect.stringContaining("no purchase"),
        },
      ]);
      expect(await about(short)).toEqual([
        {
          kind: "IMBALANCE_KIND_INTENT_UNBOOKED",
          currency: "USD",
          ref: short,
          expected: "-500",
          actual: "-400",
          detail: expect.any(String),
        },
      ]);
    } finally {
      await sql(`update billing.intents set price = 400 where id = ?`, [short]);
      await sql(`delete from billing.intents where id = ?`, [unbooked]);
    }
    expect((await reconcile()).balanced).toBe(true);
  });

  it("finds a purchase no settled intent references", async () => {
    const fan = person("fan");
    const pending = await intent(fan, "approved", 100);
    const [{ transactionId: orphan }, { transactionId: early }] = [
      await purchase(fan, 100n),
      await purchase(fan, 100n, pending),
    ];
    for (const id of [orphan, early]) {
      expect(await about(id)).toEqual([
        {
          kind: "IMBALANCE_KIND_PURCHASE_WITHOUT_INTENT",
          currency: "USD",
          ref: id,
          expected: "0",
          actual: "100",
          detail: expect.any(String),
        },
      ]);
    }
  });

  it("finds a captured payment whose intent is not settled, or that no intent has", async () => {
    const fan = person("fan");
    const approved = await intent(fan, "approved", 250);
    const event = await captured(approved);
    const stray = await captured("pi_unknown");
    expect(await about(event)).toEqual([
      {
        kind: "IMBALANCE_KIND_PAYMENT_UNSETTLED",
        currency: "USD",
        ref: event,
        expected: "250",
        actual: "0",
        detail: expect.stringContaining("approved"),
      },
    ]);
    expect(await about(stray)).toEqual([
      {
        kind: "IMBALANCE_KIND_PAYMENT_UNSETTLED",
        currency: "",
        ref: stray,
        expected: "0",
        actual: "0",
        detail: expect.stringContaining("no intent"),
      },
    ]);
  });

  it("runs while the economy is frozen, since it moves no money", async () => {
    const freeze = (frozen: boolean) =>
      t.http("POST", "/billing/api/v1/admin/freeze", { token: admin, body: { frozen, reason: "audit" } });
    await freeze(true);
    try {
      const report = await reconcile();
      expect(report.imbalances.length).toBeGreaterThan(0);
    } finally {
      await freeze(false);
    }
  });
});
