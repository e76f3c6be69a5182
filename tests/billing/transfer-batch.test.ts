import { beforeAll, describe, expect, it } from "vitest";
import { BillingAdminService } from "../../gen/pf/billing/v1/admin_pb.js";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import type { TransferResult } from "../../gen/pf/billing/v1/ledger_pb.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { usePlatform } from "../support/platform.js";
import { holdRows } from "../support/row-lock.js";
import { DATABASE_SERVER, describeWith, itWith } from "../support/skips.js";
import { billingOf, fund, person } from "./support.js";

const usd = (minor: number) => ({ minorUnits: BigInt(minor), currency: "USD" });

/** "ok" for an applied transfer, else the refusal's code; with the answer or the refusal's details. */
async function outcomeOf(
  sent: Promise<TransferResult>,
): Promise<{ code: string; answer?: TransferResult; extra?: Record<string, unknown> }> {
  try {
    return { code: "ok", answer: await sent };
  } catch (error) {
    const { code, extensions } = problemOf(error);
    return { code, extra: extensions };
  }
}

// The same behaviour with batching on (the default) and off: a transfer in a batch answers exactly as alone.
describe.each<{ mode: string; env: Record<string, string> }>([
  { mode: "batched", env: {} },
  { mode: "alone", env: { PF_BILLING_BATCH: "0" } },
])("concurrent transfers, $mode", ({ mode, env }) => {
  const t = usePlatform({ services: ["billing"], env });
  let billing: ReturnType<typeof t.client<typeof BillingService>>;
  let admin: ReturnType<typeof t.client<typeof BillingAdminService>>;

  beforeAll(async () => {
    billing = t.client(
      BillingService,
      await t.token({ kind: "service", svc: "tips", caps: ["billing.transfer.create"] }),
    );
    admin = t.client(
      BillingAdminService,
      await t.token({ kind: "service", svc: "ops", caps: ["billing.ledger.admin"] }),
    );
  });

  const sql = <T>(query: string, params: unknown[] = []) =>
    billingOf(t).orm.em.getConnection().execute<T[]>(query, params);
  const balanceOf = async (owner: string, kind: string) =>
    (
      await sql<{ balance: string }>(`select balance from billing.accounts where owner = ? and kind = ?`, [owner, kind])
    )[0]?.balance;

  it("applies each transfer its funds cover, refuses the others, and a refusal never touches its neighbours", async () => {
    // One payer whose credit covers five of its ten transfers; twenty funded payers; ten payers with no credit at all.
    const short = person("short");
    const [c1, c2] = [person("cr"), person("cr")];
    const funded = Array.from({ length: 20 }, () => person("fan"));
    const broke = Array.from({ length: 10 }, () => person("broke"));
    await fund(t, short, 550n);
    for (const fan of funded) await fund(t, fan, 100n);
    const sends = [
      ...Array.from({ length: 10 }, (_, i) => ({ from: short, to: c1, amount: 100, key: `s${i}-${short}` })),
      ...funded.map((fan) => ({ from: fan, to: c2, amount: 60, key: `f-${fan}` })),
      ...broke.map((fan) => ({ from: fan, to: c2, amount: 1, key: `b-${fan}` })),
    ];
    // Interleaved, all at once: refusals sit between applied transfers in the same batches.
    const order = sends.map((_, i) => i).sort((a, b) => (a % 7) - (b % 7) || a - b);
    const outcomes = await Promise.all(
      order.map((i) =>
        outcomeOf(
          billing.createTransfer({
            fromSubject: sends[i].from,
            toSubject: sends[i].to,
            amount: usd(sends[i].amount),
            idempotencyKey: sends[i].key,
          }),
        ),
      ),
    );
    const of = (from: (s: (typeof sends)[number]) => boolean) =>
      order.flatMap((i, n) => (from(sends[i]) ? [outcomes[n]] : []));

    const fromShort = of((s) => s.from === short);
    expect(fromShort.filter((o) => o.code === "ok")).toHaveLength(5);
    expect(fromShort.filter((o) => o.code === "insufficient_funds")).toHaveLength(5);
    // Each applied one saw the balance the ones before it left, as it would alone.
    expect(
      fromShort.flatMap((o) => (o.answer ? [o.answer.transfer!.fromCreditAfter] : [])).sort((a, b) => Number(a - b)),
    ).toEqual([50n, 150n, 250n, 350n, 450n]);
    expect(of((s) => funded.includes(s.from)).map((o) => o.code)).toEqual(Array(20).fill("ok"));
    const fromBroke = of((s) => broke.includes(s.from));
    expect(fromBroke.map((o) => o.code)).toEqual(Array(10).fill("insufficient_funds"));
    expect(fromBroke[0].extra).toMatchObject({ subject: expect.stringMatching(/^usr_broke/), available: "0" });

    expect(await balanceOf(short, "credit")).toBe("50");
    expect(await balanceOf(c1, "payable")).toBe("500");
    expect(await balanceOf(c2, "payable")).toBe(String(20 * 60));
    for (const fan of funded) expect(await balanceOf(fan, "credit")).toBe("40");
    // A refused transfer leaves nothing behind, not even the accounts a posting alone would have rolled back.
    expect(
      await sql(`select 1 from billing.accounts where owner in (${broke.map(() => "?").join(", ")})`, broke),
    ).toEqual([]);
    // One event per applied transfer, and its key answers a retry with the same transfer.
    const applied = outcomes.flatMap((o) => (o.answer ? [o.answer.transfer!] : []));
    expect(applied).toHaveLength(25);
    const events = await sql<{ n: string }>(
      `select count(*) as n from billing.outbox where subject = 'billing.transfer.created' and payload similar to ?`,
      [`%(${applied.map((tr) => tr.id).join("|")})%`],
    );
    expect(Number(events[0].n)).toBe(25);
    const retried = await billing.createTransfer({
      fromSubject: funded[0],
      toSubject: c2,
      amount: usd(60),
      idempotencyKey: `f-${funded[0]}`,
    });
    expect(retried.transfer!.id).toBe(applied.find((tr) => tr.fromSubject === funded[0])!.id);

    // Batched, transfers share commits (one database transaction writes several); alone, each has its own.
    const commits = await sql<{ n: string }>(
      `select count(distinct xmin::text) as n from billing.transactions where id in (${applied.map(() => "?").join(", ")})`,
      applied.map((tr) => tr.id),
    );
    if (mode === "batched") expect(Number(commits[0].n)).toBeLessThan(25);
    else expect(Number(commits[0].n)).toBe(25);

    const report = await admin.runReconciliation({});
    expect(report.result.case === "reconciliation" && report.result.value.imbalances).toEqual([]);
  });

  it("applies one key sent many times at once exactly once, and every caller gets the same answer", async () => {
    const [fan, creator] = [person("fan"), person("cr")];
    await fund(t, fan, 1000n);
    const body = { fromSubject: fan, toSubject: creator, amount: usd(7), idempotencyKey: `same-${fan}` };
    // Interleaved with the same key under another body: those are refused as mismatches, never applied.
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        outcomeOf(billing.createTransfer(i % 10 === 9 ? { ...body, amount: usd(8) } : body)),
      ),
    );
    const answers = outcomes.filter((o) => o.code === "ok");
    const mismatched = outcomes.filter((o) => o.code === "idempotency.mismatch");
    // The mismatching body is applied instead when it happens to come first: either way, one of the two bodies once.
    expect(answers.length + mismatched.length).toBe(30);
    expect([27, 3]).toContain(answers.length);
    expect(new Set(answers.map((o) => o.answer!.transfer!.id)).size).toBe(1);
    for (const o of answers) expect(o.answer).toEqual(answers[0].answer);
    const moved = answers[0].answer!.transfer!.amount!.minorUnits;
    expect(await balanceOf(fan, "credit")).toBe(String(1000n - moved));
    expect(await balanceOf(creator, "payable")).toBe(String(moved));
    const written = await sql<{ n: string }>(
      `select count(*) as n from billing.entries where owner = ? and kind = 'credit' and amount < 0`,
      [fan],
    );
    expect(Number(written[0].n)).toBe(1);
  });
});

// Row locks held from another transaction need a database server: the embedded one is a single session.
describeWith(DATABASE_SERVER, "a transfer whose caller stops waiting while its batch waits", () => {
  const t = usePlatform({ services: ["billing"] });
  let billing: ReturnType<typeof t.client<typeof BillingService>>;

  beforeAll(async () => {
    billing = t.client(
      BillingService,
      await t.token({ kind: "service", svc: "tips", caps: ["billing.transfer.create"] }),
    );
  });

  /** Holds the row lock of an account from another session until `release` is called. */
  const holdAccount = (owner: string, kind: string) =>
    holdRows(t.platform.databaseUrl, "select 1 from billing.accounts where owner = $1 and kind = $2 for update", [
      owner,
      kind,
    ]);

  itWith(
    DATABASE_SERVER,
    "is left out: it answers deadline_exceeded and writes nothing, and its neighbours commit",
    async () => {
      const [first, late, patient] = [person("fan"), person("fan"), person("fan")];
      const [c1, c2] = [person("cr"), person("cr")];
      for (const fan of [first, late, patient]) await fund(t, fan, 100n);
      for (const creator of [c1, c2]) await fund(t, creator, 1n, { kind: "payable" });
      const send = (from: string, to: string, timeoutMs: number) =>
        outcomeOf(
          billing.createTransfer(
            { fromSubject: from, toSubject: to, amount: usd(10), idempotencyKey: `dl-${from}` },
            { timeoutMs },
          ),
        );
      const heldC1 = await holdAccount(c1, "payable");
      const heldC2 = await holdAccount(c2, "payable");
      // The first batch waits on c1; the next two queue behind it, then wait together on c2.
      const firstSent = send(first, c1, 10_000);
      await heldC1.queued();
      const lateSent = send(late, c2, 900);
      const patientSent = send(patient, c2, 10_000);
      await heldC1.release();
      await heldC2.queued();
      // The late one is answered while its batch still waits on c2.
      const b = await lateSent;
      await heldC2.release();
      const [a, c] = await Promise.all([firstSent, patientSent]);
      expect([a.code, b.code, c.code]).toEqual(["ok", "deadline_exceeded", "ok"]);
      const balanceOf = async (owner: string) =>
        (
          await billingOf(t)
            .orm.em.getConnection()
            .execute<{ balance: string }[]>(
              `select balance from billing.accounts where owner = ? and kind = 'credit'`,
              [owner],
            )
        )[0].balance;
      expect(await balanceOf(late)).toBe("100");
      expect(await balanceOf(patient)).toBe("90");
      // Nothing was written under its key either: sent again, it applies.
      expect((await send(late, c2, 10_000)).code).toBe("ok");
      expect(await balanceOf(late)).toBe("90");
    },
  );
});
